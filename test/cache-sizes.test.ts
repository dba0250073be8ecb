// The three largest caches are sized per mode (bench issue 8: the embedded service's memory): the
// embedded service keeps fewer stream states, projector rows and recent events than a service on
// PostgreSQL, each cache honours the size it is given, and the app wires the sizes of its mode.
import t from 'tap';
import { cacheSizesFor, EMBEDDED_CACHE_SIZES, SERVER_CACHE_SIZES } from '../src/cache-sizes.ts';
import { Aggregates } from '../src/commands/aggregates.ts';
import { PostgresEventStore } from '../src/infra/eventstore/postgres.ts';
import { systemClock } from '../src/infra/clock.ts';
import type { Decider, DomainEvent } from '../src/domain/decider.ts';
import { toNew } from '../src/commands/aggregates.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { startTestApp } from './helpers/app.ts';

t.comment(`on ${dbLabel}`);

t.test('the embedded sizes are smaller than the server sizes, and each mode gets its own', async (t) => {
  t.same(cacheSizesFor('pglite'), EMBEDDED_CACHE_SIZES);
  t.same(cacheSizesFor('postgres'), SERVER_CACHE_SIZES);
  for (const k of ['aggregates', 'projectorRows', 'recentEvents'] as const) {
    t.ok(EMBEDDED_CACHE_SIZES[k] > 0 && EMBEDDED_CACHE_SIZES[k] < SERVER_CACHE_SIZES[k], `${k}: ${EMBEDDED_CACHE_SIZES[k]} < ${SERVER_CACHE_SIZES[k]}`);
  }
});

t.test('the app wires the sizes of the database it runs on', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.stop());
  const s = app.app.services;
  const want = cacheSizesFor(s.db.kind);
  t.equal(s.aggregates.limit, want.aggregates, 'stream states');
  t.equal(s.projector.rowsKept, want.projectorRows, 'projector rows');
  t.ok(s.store instanceof PostgresEventStore, 'the events table store');
  t.equal((s.store as PostgresEventStore).recentEventsKept, want.recentEvents, 'recent events');
});

type Ev = DomainEvent<'added', { n: number }>;
const counter: Decider<number, Ev> = { initialState: () => 0, evolve: (s, e) => s + e.data.n };

t.test('the aggregate cache keeps its limit: the state used longest ago is read again', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const reads: Array<[string, number]> = [];
  const readStream = store.readStream.bind(store);
  store.readStream = (id, from, to) => { reads.push([id, from ?? 1]); return readStream(id, from, to); };
  for (const id of ['s-a', 's-b', 's-c']) {
    await store.append([{ streamId: id, expectedVersion: 0, events: toNew([{ type: 'added', data: { n: 1 } }], {}) }]);
  }
  const agg = new Aggregates(store, 2);
  for (const id of ['s-a', 's-b', 's-c']) await agg.load(id, counter);
  reads.length = 0;
  await agg.load('s-c', counter);
  await agg.load('s-b', counter);
  await agg.load('s-a', counter);
  t.same(reads, [['s-c', 2], ['s-b', 2], ['s-a', 1]], 's-b and s-c read from where their cached state ends; s-a (evicted) from its start');
});
