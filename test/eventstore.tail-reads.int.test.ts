// Reads of streams' tails asked within one turn of the event loop go as one statement, each caller
// getting exactly its stream's events from its version on (bench issue 8: the webhook target's read
// of the merchant stream was a quarter of a payin's statements).
import t from 'tap';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('concurrent tail reads: one statement, each caller its own events', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  await store.start();
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const events = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: `${tag}${i + 1}`, data: { i } }));
  await store.append([
    { streamId: 'tail-a', expectedVersion: 0, events: events(5, 'a') },
    { streamId: 'tail-b', expectedVersion: 0, events: events(3, 'b') },
  ]);
  const queries: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/FROM events/.test(q.sql)) queries.push(q.sql); };
  tdb.db.knex.on('query', onQuery);
  const [a1, a4, b2, none, a6] = await Promise.all([
    store.readStream('tail-a', 1), store.readStream('tail-a', 4), store.readStream('tail-b', 2),
    store.readStream('tail-none', 1), store.readStream('tail-a', 6),
  ]);
  tdb.db.knex.off('query', onQuery);
  t.equal(queries.length, 1, 'one statement for five reads');
  t.same(a1!.map((e) => e.type), ['a1', 'a2', 'a3', 'a4', 'a5']);
  t.same(a4!.map((e) => e.type), ['a4', 'a5'], 'from its own version');
  t.same(b2!.map((e) => [e.type, e.version]), [['b2', 2], ['b3', 3]]);
  t.same(none, [], 'a stream with no events');
  t.same(a6, [], 'nothing after the end');
  t.ok(a1!.every((e) => e.streamId === 'tail-a' && e.createdAt instanceof Date && e.position > 0n), 'whole events');
});

t.test('a tail read sees every event committed before it was asked, batched or alone', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  await store.start();
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  for (let v = 0; v < 5; v++) {
    await store.append([{ streamId: 'fresh', expectedVersion: v, events: [{ type: `e${v + 1}`, data: {} }] }]);
    const [alone] = [await store.readStream('fresh', 1)];
    const batched = await Promise.all([store.readStream('fresh', 1), store.readStream('other', 1)]);
    t.equal(alone!.length, v + 1, `alone: ${v + 1} events`);
    t.equal(batched[0]!.length, v + 1, `batched: ${v + 1} events`);
  }
});
