// One event forwarder at a time among the processes on one database (workers/leased.ts): two worker
// processes publish each event once between them (each published every event before), and when the
// one forwarding stops, the other goes on from the shared checkpoint. Two apps in this process,
// each with a bus of its own that counts into one tally.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';
import { request } from './helpers/app.ts';
import { parseMetrics, series } from './helpers/finance.ts';
import { FORWARDER_LEASE_KEY } from '../workers/event-forwarder.ts';
import { leaseHolders, leaseSessions } from './helpers/leases.ts';

/** Every publish of either app's bus, by event id. */
const published = new Map<string, number>();

class TalliedBus extends MemoryBus {
  override async publish(subject: string, id: string, data: unknown): Promise<void> {
    published.set(id, (published.get(id) ?? 0) + 1);
    await super.publish(subject, id, data);
  }
}

const TOKEN = 'forwarder-lease-test-token';
const tdb = await testDatabase();
const dirs: string[] = [];
async function startWorker(): Promise<RunningApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-fwd-lease-'));
  dirs.push(dir);
  // BUS_FORWARD=all: the test's own event type is consumed by no worker of the service.
  const config = loadConfig({ DATA_DIR: dir, ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent', BUS_FORWARD: 'all' }, ['--role', 'worker']);
  return startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, bus: new TalliedBus(), log: createLogger('silent'), port: 0 });
}

const first = await startWorker();
const second = await startWorker();
let firstStopped = false;
t.teardown(async () => {
  if (!firstStopped) await first.stop();
  await second.stop();
  await tdb.teardown();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const appendThree = async (app: RunningApp): Promise<string[]> => {
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  await app.services.store.append([{
    streamId: `forwarder-lease-test-${randomUUID()}`, expectedVersion: 0,
    events: ids.map((id, i) => ({ id, type: 'forwarder.tested', data: { i } })),
  }]);
  return ids;
};

const settle = () => new Promise((r) => setTimeout(r, 500));

t.test('two worker processes publish each event once between them', async (t) => {
  const ids = [...await appendThree(first), ...await appendThree(second)];
  await waitUntil('every event published', () => ids.every((id) => published.has(id)));
  await settle(); // a second forwarder would publish them too by now
  t.same(ids.map((id) => published.get(id)), ids.map(() => 1), 'each event published once');
  const held = { sessions: (await leaseSessions(tdb.db.knex)).length, holders: await leaseHolders(tdb.db.knex, FORWARDER_LEASE_KEY) };
  t.same(held, { sessions: 2, holders: 1 }, 'both processes have a lease session; one holds the forwarder\'s lease');
});

/** What a process's /metrics says of the forwarder: 1 where it runs, 0 where it waits. */
const forwarding = async (app: RunningApp): Promise<number | undefined> => {
  const r = await request(app.url!, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
  return parseMetrics(r.text).get(series('leased_worker_running', { worker: 'forwarder' }));
};

t.test('each process\'s /metrics says whether it forwards', async (t) => {
  t.same([await forwarding(first), await forwarding(second)], [1, 0]);
});

// Liveness: the process left takes the lease over (before the lease, it forwarded all along).
t.test('when the forwarding process stops, the other forwards what follows', async (t) => {
  await first.stop();
  firstStopped = true;
  const ids = await appendThree(second);
  await waitUntil('the events published by the process left', () => ids.every((id) => published.has(id)));
  t.same(ids.map((id) => published.get(id)), [1, 1, 1]);
  t.equal(await forwarding(second), 1, 'its /metrics says so');
});
