// The crash suite's merchant driver (helpers/crash/driver.ts) gives a request up only once the
// service's newest life has been ready for giveUpMs without a final answer: a request parked behind
// a dead claim spans many lives, and time the service spends dead or starting is no defect of the
// service (CI gave one up after 120 s of which about 75 were refused connections, stop 51). A life
// answering `idempotency_in_progress` for ever, hanging, dropping connections or dying by itself is
// still given up. The follow-ups waiting for a payment's state (a refund after its payin completed,
// a relaunch after the disbursement failed) count time the same way.
import t, { type Test } from 'tap';
import http from 'node:http';
import { Driver, GaveUp, type DriverOptions } from './helpers/crash/driver.ts';
import { seededRng } from './helpers/crash/rng.ts';
import { freePort } from './helpers/net.ts';

type Reply = { status: number; body: string } | 'hang' | 'drop';

const inProgress: Reply = { status: 409, body: JSON.stringify({ error: { code: 'idempotency_in_progress', message: 'still being processed' } }) };
const json = (status: number, body: unknown): Reply => ({ status, body: JSON.stringify(body) });

/** A service on one port whose lives end and begin as a test says; `answer` says what each request gets. */
class FlakyService {
  private server: http.Server | undefined;
  private ended = false;
  /** When the running (or last) life became ready; undefined while a new one starts (ChildService's newestReadyAt). */
  readyAt: number | undefined;
  requests = 0;

  constructor(readonly port: number, private readonly answer: (n: number, svc: FlakyService) => Reply) {}

  async up(): Promise<void> {
    if (this.ended) return; // a life due after the test ended never starts
    this.server = http.createServer((req, res) => {
      const a = this.answer(++this.requests, this);
      if (a === 'hang') return;
      if (a === 'drop') return void req.socket.destroy();
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.readyAt = Date.now();
  }

  /** Stops listening and drops every connection, as a SIGKILL does; `restarting`: a new life is starting. */
  down(restarting: boolean): void {
    this.server?.closeAllConnections();
    this.server?.close();
    this.server = undefined;
    if (restarting) this.readyAt = undefined;
  }

  end(): void {
    this.ended = true;
    this.down(false);
  }
}

async function serve(t: Test, answer: (n: number, svc: FlakyService) => Reply): Promise<FlakyService> {
  const svc = new FlakyService(await freePort(), answer);
  t.teardown(() => svc.end());
  await svc.up();
  return svc;
}

/**
 * A service that answers `meanwhile` to `perLife` requests, then is killed and starts again for
 * 800 ms, four times over; from its fifth life on it answers `last`.
 */
function dyingFourTimes(t: Test, perLife: number, meanwhile: Reply, last: Reply): Promise<FlakyService> {
  let lives = 0;
  return serve(t, (n, s) => {
    if (lives >= 4) return last;
    if (n % perLife === 0) setImmediate(() => { s.down(true); setTimeout(() => { lives++; void s.up(); }, 800); });
    return meanwhile;
  });
}

const driverFor = (svc: { port: number; readyAt?: number | undefined }, o: Partial<DriverOptions>) => new Driver({
  url: `http://127.0.0.1:${svc.port}`, apiKey: 'k', apiSecret: 's', rng: seededRng(1), concurrency: 1,
  inOutage: () => false, inDoubtArmed: () => false, lifeReadyAt: () => svc.readyAt, ...o,
});

const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);

t.test('a request whose service keeps being killed is answered once a life answers it, however long that took', async (t) => {
  // Each life answers in progress twice (about a second of the driver's retries): wall time is
  // twice the give-up, no life half of it.
  const svc = await dyingFourTimes(t, 2, inProgress, json(201, { id: 'p1' }));
  const began = Date.now();
  const answer = await driverFor(svc, { giveUpMs: 2_500 }).call('POST', '/payouts', {}, 'key-1');
  t.equal(answer.status, 201, 'answered with what the last life said');
  t.equal(answer.body.id, 'p1');
  t.ok(Date.now() - began > 2_500, `it took longer than the give-up in wall time (${Date.now() - began} ms)`);
  t.ok(answer.tries > 8, `the driver retried across the lives (${answer.tries} tries)`);
});

t.test('a life answering in progress for ever is given up, and the reason says so', async (t) => {
  const svc = await serve(t, () => inProgress);
  const began = Date.now();
  const err = await failure(driverFor(svc, { giveUpMs: 1_500 }).call('POST', '/payouts', {}, 'key-2'));
  t.ok(err instanceof GaveUp, 'given up');
  t.ok(Date.now() - began >= 1_500, 'not before the give-up');
  t.match(err?.message, /got no final answer in \d+ ms of the service's life/);
  t.match(err?.message, /instead: 409 idempotency_in_progress ×\d+/, 'what came instead');
  t.match(err?.message, /in order: 0\.0s-\d+\.\ds 409 idempotency_in_progress ×\d+/, 'the attempts in order, as runs');
});

t.test('a life that drops every connection, hangs, or dies by itself with nothing to start another, is given up', async (t) => {
  const dropping = await serve(t, () => 'drop');
  let began = Date.now();
  const dropped = await failure(driverFor(dropping, { giveUpMs: 1_000 }).call('POST', '/payouts', {}, 'key-3'));
  t.ok(dropped instanceof GaveUp, 'dropped connections: given up');
  t.match(dropped?.message, /no answer \(TypeError UND_ERR_SOCKET\) ×\d+/, 'named as a dropped connection');
  t.ok(Date.now() - began < 4_000, `within its give-up, not at some later bound (${Date.now() - began} ms)`);

  const hanging = await serve(t, () => 'hang');
  const hung = await failure(driverFor(hanging, { giveUpMs: 1_000, requestTimeoutMs: 300 }).call('GET', '/payins/x'));
  t.ok(hung instanceof GaveUp, 'a hung answer: given up');
  t.match(hung?.message, /no answer \(TimeoutError\) ×\d+/, 'named as our own time-out');

  const dying = await serve(t, (_n, s) => { setImmediate(() => s.down(false)); return inProgress; });
  began = Date.now();
  const died = await failure(driverFor(dying, { giveUpMs: 1_000 }).call('POST', '/payouts', {}, 'key-4'));
  t.ok(died instanceof GaveUp, 'a life that died by itself: given up');
  t.ok(Date.now() - began < 4_000, `within its give-up, not at some later bound (${Date.now() - began} ms)`);
  t.match(died?.message, /no answer \(TypeError ECONNREFUSED\) ×\d+/, 'named as a refused connection');
});

t.test('a follow-up waiting for a state counts only the time the newest life has been ready', async (t) => {
  // Each life answers pending three times (about a second of polls).
  const svc = await dyingFourTimes(t, 3, json(200, { status: 'pending' }), json(200, { status: 'completed' }));
  const began = Date.now();
  const missed = await driverFor(svc, { waitForStateMs: 2_500 }).waitFor('/payins/p1', (b) => b.status === 'completed');
  t.equal(missed, undefined, 'it saw the state once the last life answered it');
  t.ok(Date.now() - began > 2_500, `longer than the wait in wall time (${Date.now() - began} ms)`);

  const stuck = await serve(t, () => json(200, { status: 'pending' }));
  const stuckSince = Date.now();
  const last = await driverFor(stuck, { waitForStateMs: 1_000 }).waitFor('/payins/p2', (b) => b.status === 'completed');
  t.match(last, /"status":"pending"/, 'a state that never comes is reported with the last body');
  t.ok(Date.now() - stuckSince >= 1_000, 'after the wait');
});

t.test('a failed run abandons its requests: they give up at their next try', async (t) => {
  // Nothing listens and no life is ever ready: it would retry for as long as the test lasts.
  const driver = driverFor({ port: await freePort() }, { giveUpMs: 1_000 });
  const began = Date.now();
  const pending = failure(driver.call('POST', '/payouts', {}, 'key-5'));
  setTimeout(() => driver.abandon(), 300);
  const err = await pending;
  t.ok(err instanceof GaveUp, 'given up');
  t.match(err?.message, /abandoned, the run has failed/);
  t.ok(Date.now() - began < 5_000, `at once (${Date.now() - began} ms)`);
});
