// The event forwarder on the in-process bus, which keeps nothing across a crash: its checkpoint
// passes a batch once everything published up to it is settled, even while later messages are
// still being handled. Under a continuous load something is always unsettled; before this the
// checkpoint waited for a moment with nothing unsettled at all, and a crashed embedded service
// re-sent everything since its last quiet moment.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { readCheckpoint } from '../infra/checkpoints.ts';
import { FORWARDER } from '../workers/event-forwarder.ts';
import { subjectOf } from '../infra/bus/forwarded-event.ts';
import { testDatabase } from './helpers/db.ts';
import { waitFor } from './helpers/bus-contract.ts';

const TYPE = 'forwarder.settled_tested';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-fwd-mem-'));
const tdb = await testDatabase();
const bus = new MemoryBus();
// The forwarder asks the bus for its lowest unsettled message at each attempt to save its
// checkpoint (nothing else asks): counted, so a test waits for the saves themselves.
let saveAttempts = 0;
const lowestUnsettled = bus.lowestUnsettled.bind(bus);
bus.lowestUnsettled = () => {
  saveAttempts++;
  return lowestUnsettled();
};
// The test's consumer holds each message until the test releases it; it subscribes before the
// forwarder starts (the app's start), as the service's own consumers do.
const release = new Map<string, () => void>();
const received = new Set<string>();
await bus.consume({
  durable: 'settled-test', subjects: [subjectOf(TYPE)], concurrency: 16,
  handler: async (msg) => {
    received.add(msg.id);
    await new Promise<void>((resolve) => release.set(msg.id, resolve));
  },
});
// BUS_FORWARD=all: the test's event type is consumed by no worker of the service.
const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'forwarder-memory-test-token', LOG_LEVEL: 'silent', BUS_FORWARD: 'all' }, ['--role', 'worker']);
const app = await startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, bus, log: createLogger('silent'), port: 0 });
t.teardown(async () => {
  for (const r of release.values()) r();
  await app.stop();
  await tdb.teardown();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const checkpoint = () => readCheckpoint(app.services.knex, FORWARDER);
/** One event in a stream of its own, forwarded and in the consumer's hands before this returns. */
const appendOne = async () => {
  const id = randomUUID();
  const r = await app.services.store.append([{ streamId: `fwd-mem-${randomUUID()}`, expectedVersion: 0, events: [{ id, type: TYPE, data: {} }] }]);
  await waitFor('the consumer to have it', () => received.has(id));
  return { id, position: r.position };
};
/**
 * Until the forwarder has made a whole save attempt from the state as it is now: its attempts run
 * one after the other, so once the second one from now has begun, the first has written (or not).
 */
const settle = () => {
  const from = saveAttempts;
  return waitFor('a checkpoint save attempt from the state as it is now', () => saveAttempts >= from + 2);
};

t.test('the checkpoint follows the lowest unsettled message, not a moment with none', async (t) => {
  const first = await appendOne();
  const second = await appendOne();
  await settle();
  t.ok(await checkpoint() < first.position, 'both unsettled: the checkpoint stays before the first');

  release.get(first.id)!();
  const third = await appendOne(); // the load goes on: something is always unsettled
  await waitFor('the checkpoint to pass the first', async () => (await checkpoint()) >= first.position);
  await settle();
  t.equal(await checkpoint(), first.position, 'the first settled: the checkpoint passes it while the second and third are handled');

  release.get(third.id)!();
  await settle();
  t.equal(await checkpoint(), first.position, 'the third settled, the second not: a crash now would lose the second, so not past it');

  release.get(second.id)!();
  await waitFor('the checkpoint at the last forwarded event', async () => (await checkpoint()) === third.position);
  t.equal(await checkpoint(), third.position, 'all settled: the checkpoint is at the last forwarded event');
});
