// workers/leased.ts on a real PostgreSQL: among several processes (here, several starts of the same
// leased worker, each with its own session), one runs the worker; another takes over when the holder
// stops or loses its database session, and a holder whose session ends stops its worker.
import t from 'tap';
import net from 'node:net';
import pg from 'pg';
import type { Services } from '../commands/services.ts';
import { createLogger } from '../infra/log.ts';
import { leased, leasedWorkersOf } from '../workers/leased.ts';
import { LeaseSession } from '../infra/session-lease.ts';
import { leaseHolders, leaseSessions as sessionsOf } from './helpers/leases.ts';
import type { Worker } from '../workers/worker.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

const KEY = 4_242_001;
const RETRY_MS = 50;

const tdb = await testDatabase();
t.teardown(() => tdb.teardown());
const services = { db: tdb.db, config: { databaseUrl: tdb.url }, log: createLogger('silent') } as unknown as Services;

/** A worker that counts how many of its runs are going at once, and how many ever started. */
function countingWorker(): { worker: Worker; running: () => number; started: () => number } {
  let running = 0;
  let started = 0;
  return {
    running: () => running,
    started: () => started,
    worker: {
      name: 'counting',
      async start() {
        running++;
        started++;
        return async () => { running--; };
      },
    },
  };
}

const holders = () => leaseHolders(tdb.db.knex, KEY);
const leaseSessions = () => sessionsOf(tdb.db.knex);

t.test('one of three runs the worker; the next takes over when the holder stops', async (t) => {
  const counting = countingWorker();
  const stops = [];
  for (let i = 0; i < 3; i++) stops.push(await leased(counting.worker, KEY, { retryMs: RETRY_MS }).start(services));
  t.equal(counting.running(), 1, 'the first start took the lease and runs the worker; the others wait');
  t.equal(await holders(), 1, 'one session holds the advisory lock');
  const sessionsBefore = await leaseSessions();
  await new Promise((r) => setTimeout(r, RETRY_MS * 4));
  t.equal(counting.started(), 1, 'the waiting ones keep trying and never start it while it is held');
  t.same(await leaseSessions(), sessionsBefore, 'each asks again on its own session, not a new connection per try');
  t.equal(sessionsBefore.length, 3);
  await stops[0]!();
  await waitUntil('another start to take the lease', () => counting.started() === 2);
  t.equal(counting.running(), 1, 'exactly one runs again');
  await Promise.all(stops.slice(1).map((stop) => stop()));
  t.equal(counting.running(), 0, 'stopped everywhere');
  t.equal(await holders(), 0, 'the lock is released');
});

t.test('a holder whose session ends stops its worker, and the lease moves on', async (t) => {
  const counting = countingWorker();
  const stopA = await leased(counting.worker, KEY, { retryMs: RETRY_MS }).start(services);
  const stopB = await leased(counting.worker, KEY, { retryMs: RETRY_MS }).start(services);
  t.equal(counting.running(), 1, 'one holder');
  // Play a lost connection: the server ends the holding session.
  const admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
  await admin.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())", [KEY]);
  await admin.end();
  await waitUntil('the other start to take the lease', () => counting.started() === 2);
  await waitUntil('one worker running once the old holder stopped its own', () => counting.running() === 1);
  t.equal(await holders(), 1, 'the new holder holds the lock');
  await stopA();
  await stopB();
  t.equal(counting.running(), 0, 'stopped everywhere');
  t.equal(await holders(), 0, 'the lock is released');
});

t.test('a worker that fails to start gives the lease up (another takes it) and is tried again', async (t) => {
  let tries = 0;
  let mayStart = false;
  const stopFlaky = await leased({
    name: 'flaky',
    async start() {
      tries++;
      if (!mayStart) throw new Error('not yet');
      return async () => undefined;
    },
  }, KEY, { retryMs: RETRY_MS }).start(services);
  t.equal(tries, 1, 'the first start took the lease and failed');
  const counting = countingWorker();
  const stopOther = await leased(counting.worker, KEY, { retryMs: RETRY_MS }).start(services);
  await waitUntil('the other to take the lease the failing one let go', () => counting.running() === 1);
  mayStart = true;
  await stopOther();
  await waitUntil('the failing one, tried again, to start', async () => tries > 1 && (await holders()) === 1);
  await stopFlaky();
  t.equal(await holders(), 0, 'released on stop');
});

/**
 * A TCP relay to PostgreSQL that can go silent: it stops passing bytes (and closes) without closing
 * anything. `url`: the database at `databaseUrl`, through the relay.
 */
async function silentRelay(databaseUrl: string): Promise<{ url: string; silence: () => void; close: () => void }> {
  const target = new URL(databaseUrl);
  let silent = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port || 5432), target.hostname);
    for (const [from, to] of [[inbound, outbound], [outbound, inbound]] as const) {
      sockets.add(from);
      from.on('data', (d) => { if (!silent) to.write(d); });
      // Silent, a close is not passed on either: the server keeps its side, as across a lost network.
      from.on('close', () => { if (!silent) to.destroy(); });
      from.on('error', () => { if (!silent) to.destroy(); });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    silence: () => { silent = true; },
    close: () => { for (const sk of sockets) sk.destroy(); server.close(); },
  };
}

t.test('a holder whose session goes silent stops its worker within its heartbeat', async (t) => {
  const relay = await silentRelay(tdb.url);
  const relayed = { ...services, db: { ...tdb.db, url: relay.url } } as unknown as Services;
  const counting = countingWorker();
  const stopA = await leased(counting.worker, KEY, { retryMs: RETRY_MS, timings: { heartbeatMs: 100, replyTimeoutMs: 400 } }).start(relayed);
  t.equal(counting.running(), 1, 'the holder runs the worker');
  relay.silence(); // no close, no error: only the missing answers tell
  await waitUntil('the holder to stop its worker', () => counting.running() === 0);
  t.equal(await holders(), 1, 'stopped on a missed heartbeat, while the server still counts the silent session as the holder');
  relay.close(); // the server's side ends, as its keepalives would end it
  const stopB = await leased(counting.worker, KEY, { retryMs: RETRY_MS }).start(services);
  await waitUntil('another to take the lease', () => counting.running() === 1);
  await stopA();
  await stopB();
  t.equal(await holders(), 0, 'released');
});

t.test('a holder that cannot do the work steps aside, and another takes the lease', async (t) => {
  const sick = countingWorker();
  const well = countingWorker();
  let healthy = true;
  const stopSick = await leased(sick.worker, KEY, { retryMs: RETRY_MS, healthy: async () => healthy, unhealthyForMs: 200 }).start(services);
  const stopWell = await leased(well.worker, KEY, { retryMs: RETRY_MS }).start(services);
  t.equal(sick.running(), 1, 'the first holds the lease');
  healthy = false; // its bus, say, unreachable from its host
  await waitUntil('the other to take the lease', () => well.running() === 1);
  t.equal(sick.running(), 0, 'the one that stepped aside stopped its worker');
  t.equal(await holders(), 1, 'one holder');
  await stopSick();
  await stopWell();
  t.equal(await holders(), 0, 'released');
});

t.test('a session closed while it connects ends the try at once (stop() does not wait on it)', async (t) => {
  const relay = await silentRelay(tdb.url);
  relay.silence(); // the server never answers the connection's start
  const session = new LeaseSession(relay.url, KEY, { heartbeatMs: 100, replyTimeoutMs: 60_000 });
  const trying = session.tryTake().then(() => 'taken', (err: Error) => err.message);
  await new Promise((r) => setTimeout(r, 100));
  const started = Date.now();
  await session.close();
  t.equal(await trying, 'lease session closed while connecting', 'the try fails with the session');
  t.ok(Date.now() - started < 5_000, 'at once, not after the reply time-out');
  relay.close();
});

t.test('with the embedded database (one process by its data directory\'s lock), the worker runs without a lease', async (t) => {
  const counting = countingWorker();
  const embedded = { ...services, config: { databaseUrl: undefined } } as unknown as Services;
  const stop = await leased(counting.worker, KEY, { retryMs: RETRY_MS }).start(embedded);
  t.equal(counting.running(), 1, 'it runs');
  t.equal(await holders(), 0, 'no lease taken, no session of its own');
  t.same(leasedWorkersOf(embedded), [{ worker: 'counting', running: true }], 'reported as running here');
  await stop();
  t.equal(counting.running(), 0);
  t.same(leasedWorkersOf(embedded), [{ worker: 'counting', running: false }], 'and as not running once stopped');
});
