// The crash suite's merchant driver (helpers/crash/driver.ts) gives a request up only after the
// service has answered for giveUpMs without a final answer: a request parked behind a dead claim
// spans many lives, and time the service spends dead or starting is no defect of the service (CI
// gave one up after 120 s of which about 75 were refused connections, stop 51). A service answering
// `idempotency_in_progress` for ever is still given up, and so is one that never comes back. The
// follow-ups waiting for a payment's state (a refund after its payin completed, a relaunch after the
// disbursement failed) count time the same way.
import t, { type Test } from 'tap';
import http from 'node:http';
import { Driver, GaveUp } from './helpers/crash/driver.ts';
import { seededRng } from './helpers/crash/rng.ts';
import { freePort } from './helpers/net.ts';

const inProgress = JSON.stringify({ error: { code: 'idempotency_in_progress', message: 'still being processed' } });

/** A service on one port that can die and come back; `answer` says what each request gets. */
class FlakyService {
  private server: http.Server | undefined;
  private ended = false;
  requests = 0;

  constructor(readonly port: number, private readonly answer: (n: number, svc: FlakyService) => Reply) {}

  async up(): Promise<void> {
    if (this.ended) return; // a life due after the test ended never starts
    this.server = http.createServer((_req, res) => {
      const a = this.answer(++this.requests, this);
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** Stops listening and drops every connection, as a SIGKILLed process does. */
  down(): void {
    this.server?.closeAllConnections();
    this.server?.close();
    this.server = undefined;
  }

  end(): void {
    this.ended = true;
    this.down();
  }
}

type Reply = { status: number; body: string };

/**
 * A service that answers `meanwhile` to `perLife` requests, then dies for 800 ms and comes back, four
 * times over; from its fifth life on it answers `last`.
 */
async function dyingFourTimes(t: Test, perLife: number, meanwhile: Reply, last: Reply): Promise<FlakyService> {
  let lives = 0;
  const svc = new FlakyService(await freePort(), (n, s) => {
    if (lives >= 4) return last;
    if (n % perLife === 0) setImmediate(() => { s.down(); setTimeout(() => { lives++; void s.up(); }, 800); });
    return meanwhile;
  });
  t.teardown(() => svc.end());
  await svc.up();
  return svc;
}

const driverFor = (port: number, giveUpMs: number, waitForStateMs?: number) => new Driver({
  url: `http://127.0.0.1:${port}`, apiKey: 'k', apiSecret: 's', rng: seededRng(1), concurrency: 1,
  inOutage: () => false, inDoubtArmed: () => false, giveUpMs, ...(waitForStateMs ? { waitForStateMs } : {}),
});

t.test('a request whose service keeps dying is answered once it lives, however long that took', async (t) => {
  // Each life answers in progress twice (about a second of the driver's retries): wall time is
  // twice the give-up, no life half of it.
  const svc = await dyingFourTimes(t, 2, { status: 409, body: inProgress }, { status: 201, body: JSON.stringify({ id: 'p1' }) });
  const began = Date.now();
  const answer = await driverFor(svc.port, 2_500).call('POST', '/payouts', {}, 'key-1');
  t.equal(answer.status, 201, 'answered with what the last life said');
  t.equal(answer.body.id, 'p1');
  t.ok(Date.now() - began > 2_500, `it took longer than the give-up in wall time (${Date.now() - began} ms)`);
  t.ok(answer.tries > 8, `the driver retried across the lives (${answer.tries} tries)`);
});

t.test('a service answering in progress for ever is given up, and the reason says so', async (t) => {
  const port = await freePort();
  const svc = new FlakyService(port, () => ({ status: 409, body: inProgress }));
  t.teardown(() => svc.end());
  await svc.up();
  const began = Date.now();
  const err = await driverFor(port, 1_500).call('POST', '/payouts', {}, 'key-2').then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof GaveUp, 'given up');
  t.ok(Date.now() - began >= 1_500, 'not before the give-up');
  t.match((err as Error).message, /got no answer in 1500 ms of a service answering/);
  t.match((err as Error).message, /409 idempotency_in_progress ×\d+/, 'what came instead');
  t.match((err as Error).message, /in order: \+0\.0s 409 idempotency_in_progress ×\d+/, 'the attempts in order');
});

t.test('a service that never comes back is given up at the hard bound', async (t) => {
  const port = await freePort(); // nothing listens on it
  const began = Date.now();
  const err = await driverFor(port, 200).call('GET', '/payins/x').then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof GaveUp, 'given up');
  t.ok(Date.now() - began >= 1_000, `after five give-ups of wall time (${Date.now() - began} ms)`);
  t.match((err as Error).message, /no answer \(TypeError\) ×\d+/);
});

t.test('a follow-up waiting for a state counts only the time the service answered', async (t) => {
  // Each life answers pending three times (about a second of polls).
  const svc = await dyingFourTimes(t, 3, { status: 200, body: JSON.stringify({ status: 'pending' }) }, { status: 200, body: JSON.stringify({ status: 'completed' }) });
  const began = Date.now();
  const missed = await driverFor(svc.port, 10_000, 2_500).waitFor('/payins/p1', (b) => b.status === 'completed');
  t.equal(missed, undefined, 'it saw the state once the last life answered it');
  t.ok(Date.now() - began > 2_500, `longer than the wait in wall time (${Date.now() - began} ms)`);

  const stuck = new FlakyService(await freePort(), () => ({ status: 200, body: JSON.stringify({ status: 'pending' }) }));
  t.teardown(() => stuck.end());
  await stuck.up();
  const last = await driverFor(stuck.port, 10_000, 1_000).waitFor('/payins/p2', (b) => b.status === 'completed');
  t.match(last, /"status":"pending"/, 'a state that never comes is reported with the last body');
});

t.test('a failed run abandons its requests: they give up at their next try', async (t) => {
  const driver = driverFor(await freePort(), 60_000); // nothing listens: it would retry for minutes
  const began = Date.now();
  const pending = driver.call('POST', '/payouts', {}, 'key-3').then(() => undefined, (e: unknown) => e);
  setTimeout(() => driver.abandon(), 300);
  const err = await pending;
  t.ok(err instanceof GaveUp, 'given up');
  t.match((err as Error).message, /abandoned, the run has failed/);
  t.ok(Date.now() - began < 5_000, `at once, not at the give-up (${Date.now() - began} ms)`);
});
