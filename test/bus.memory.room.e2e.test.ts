// The in-process bus holds its messages in memory; the event forwarder waits for room before it
// publishes, so a consumer far behind leaves its backlog in the event store, not in the process
// (infra/bus/memory.ts, workers/event-forwarder.ts).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MemoryBus, ROOM_HIGH } from '../infra/bus/memory.ts';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { testDatabase } from './helpers/db.ts';
import { sleep, waitFor } from './helpers/bus-contract.ts';
import { settles } from './helpers/wait.ts';
import { makeEventForwarder } from '../workers/event-forwarder.ts';

/** A handler that holds every message until the gate opens. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

/** Counts the calls to the bus's room() still waiting (the forwarder is its only caller): whether it waits for room now. */
function waitingForRoom(bus: MemoryBus): () => boolean {
  const room = bus.room.bind(bus);
  let waiting = 0;
  bus.room = () => {
    waiting++;
    return room().finally(() => waiting--);
  };
  return () => waiting > 0;
}

/** The service on a test database and the given in-process bus, every event forwarded; stopped at teardown. */
async function appOn(t: Test, bus: MemoryBus, role: 'api' | 'worker', beforeStop: () => void = () => undefined) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-room-'));
  const tdb = await testDatabase();
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'room-test-token', LOG_LEVEL: 'silent', BUS_FORWARD: 'all' }, ['--role', role]);
  const app = await startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, bus, log: createLogger('silent'), port: 0 });
  t.teardown(async () => {
    beforeStop();
    await app.stop();
    await tdb.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return app;
}

t.test('room() waits while a consumer has more than ROOM_HIGH queued, until it is down to half', async (t) => {
  const bus = new MemoryBus();
  t.teardown(() => bus.close());
  const g = gate();
  const seen = new Set<string>();
  await bus.consume({ durable: 'slow', subjects: ['r.>'], handler: async (m) => { await g.opened; seen.add(m.id); } });
  await bus.room(); // empty: at once
  for (let i = 0; i < ROOM_HIGH + 10; i++) await bus.publish('r.x', `m${i}`, {}); // publish itself never waits
  t.equal(bus.fullest(), ROOM_HIGH + 9, 'queued (one in hand)');
  let roomy = false;
  const waiting = bus.room().then(() => { roomy = true; });
  await sleep(50);
  t.notOk(roomy, 'no room while the consumer is over the mark');
  g.open();
  await waiting;
  t.ok(bus.fullest() <= ROOM_HIGH / 2, 'room once the queue is down to half');
  await waitFor('every message', () => seen.size === ROOM_HIGH + 10);
});

t.test('the event forwarder leaves a slow consumer\'s backlog in the event store', async (t) => {
  const bus = new MemoryBus();
  const forwarderWaits = waitingForRoom(bus);
  const app = await appOn(t, bus, 'worker');
  const g = gate();
  const seen = new Map<string, number>();
  await bus.consume({
    durable: 'room-test', subjects: ['events.room.tested'],
    handler: async (m) => { await g.opened; seen.set(m.id, (seen.get(m.id) ?? 0) + 1); },
  });
  const EVENTS = 3 * ROOM_HIGH;
  for (let i = 0; i < EVENTS; i += 100) {
    await app.services.store.append([{
      streamId: `room-${randomUUID()}`, expectedVersion: 0,
      events: Array.from({ length: 100 }, (_, j) => ({ type: 'room.tested', data: { n: i + j } })),
    }]);
  }
  // The forwarder reads on and stops where the consumer's queue passed the mark (a window of
  // publishes may go past it): it waits for room, and the gated queue stays as it is.
  await waitFor('the forwarder to wait for room with the queue past the mark', () => forwarderWaits() && bus.fullest() > ROOM_HIGH);
  const most = bus.fullest();
  t.ok(most > ROOM_HIGH / 2, `the queue filled (${most})`);
  t.ok(most <= ROOM_HIGH + 64, `but no further than the mark and one window of publishes (${most} of ${EVENTS})`);
  g.open();
  await waitFor('every event delivered', () => seen.size === EVENTS);
  t.ok([...seen.values()].every((n) => n === 1), 'each once');
});

t.test('a forwarder waiting for room stops at once when asked', async (t) => {
  const bus = new MemoryBus();
  const forwarderWaits = waitingForRoom(bus);
  const g = gate();
  // The API role starts no workers: the forwarder below is the only one, stopped by the test.
  const app = await appOn(t, bus, 'api', g.open);
  await bus.consume({ durable: 'room-stop', subjects: ['events.room.stopped'], handler: async () => { await g.opened; } });
  const stopForwarder = await makeEventForwarder().start(app.services);
  for (let i = 0; i < 2 * ROOM_HIGH; i += 100) {
    await app.services.store.append([{
      streamId: `room-${randomUUID()}`, expectedVersion: 0,
      events: Array.from({ length: 100 }, (_, j) => ({ type: 'room.stopped', data: { n: i + j } })),
    }]);
  }
  await waitFor('the forwarder to wait for room with the queue over the mark', () => forwarderWaits() && bus.fullest() > ROOM_HIGH);
  await settles('the forwarder to stop while it waits for room (it must not wait for the slow consumer)', stopForwarder());
  t.pass('the stop does not wait for the slow consumer');
});
