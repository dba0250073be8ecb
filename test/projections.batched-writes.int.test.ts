// The money and transfer read models apply a batch with a fixed number of statements whatever its
// size (bench issue 8: a query per event made the projector, which every create's read-your-writes
// waits on, the bottleneck under load), with the same rows as one event at a time. A row holds the
// folded stream, not its events: earlier events come from the store, one query per batch.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { moneyProjection } from '../projections/money.ts';
import { historyOf, historyThroughStore } from '../projections/history.ts';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { quoteConsumed, quoteCreated } from './helpers/quote-events.ts';

t.comment(`on ${dbLabel}`);

/** A fresh database and store, and `count` new quotes of one merchant appended (not yet projected). */
async function withQuotes(t: Test, count: number) {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const merchant = randomUUID();
  const ids = Array.from({ length: count }, () => randomUUID());
  await store.append(ids.map((id) => ({ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, merchant)] })));
  const events: RecordedEvent[] = await store.readAll(0n, 1000);
  return { tdb, store, merchant, ids, events, ctx: { history: historyOf(store) } };
}

t.test('a batch of new quotes: one write of the table and no read, same rows as event by event', async (t) => {
  const { tdb, merchant, ids, events, ctx } = await withQuotes(t, 120);
  let statements = 0;
  let counting = false;
  const count = () => { if (counting) statements++; };
  tdb.db.knex.on('query', count);
  await tdb.db.knex.transaction(async (tx) => {
    counting = true;
    await moneyProjection.apply(tx, events, ctx);
    counting = false;
  });
  tdb.db.knex.removeListener('query', count);
  t.equal(statements, 1, `${statements} statement for ${events.length} events`);
  const rows = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'status');
  t.equal(rows.length, ids.length, 'every quote has its row');
  t.ok(rows.every((r: { version: number; status: string }) => r.version === 1 && r.status === 'active'));

  // Applying the same batch again changes nothing (idempotent), and one event at a time agrees.
  await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, events, ctx));
  const again = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'body').orderBy('id');
  await tdb.db.knex('quotes').where({ merchant_id: merchant }).delete();
  for (const e of events) await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, [e], ctx));
  const single = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'body').orderBy('id');
  t.same(again, single, 'batched and event-by-event rows are the same');
});

t.test('streams begun in earlier batches: their events read from the store in one query; a row never goes back', async (t) => {
  const { tdb, store, merchant, ids, events: created, ctx } = await withQuotes(t, 40);
  await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, created, ctx));
  await store.append(ids.map((id) => ({ streamId: `quote-${id}`, expectedVersion: 1, events: [quoteConsumed(id)] })));
  const consumed = await store.readAll(created[created.length - 1]!.position, 1000);

  const reads: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/JOIN events e ON/.test(q.sql)) reads.push(q.sql); };
  tdb.db.knex.on('query', onQuery);
  await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, consumed, ctx));
  tdb.db.knex.removeListener('query', onQuery);
  t.equal(reads.length, 1, `one read of the store for ${ids.length} streams`);
  const rows = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'status', 'body');
  t.equal(rows.length, ids.length);
  t.ok(rows.every((r: { version: number; status: string; body: { status: string } }) => r.version === 2 && r.status === 'consumed' && r.body.status === 'consumed'),
    'every row folded from its stored event and the new one');

  // A late writer (a process whose batch was read before this one) applies the first events again: nothing goes back.
  await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, created, ctx));
  const after = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'status');
  t.ok(after.every((r: { version: number; status: string }) => r.version === 2 && r.status === 'consumed'), 'an older state does not replace a newer row');
});

t.test('read in the transaction or through the store API (KurrentDB\'s way): the same events', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const [a, b] = [randomUUID(), randomUUID()];
  await store.append([{ streamId: `quote-${a}`, expectedVersion: 0, events: [quoteCreated(a, randomUUID()), quoteConsumed(a), quoteConsumed(a)] }]);
  await store.append([{ streamId: `quote-${b}`, expectedVersion: 0, events: [quoteCreated(b, randomUUID())] }]);
  const wants = [{ streamId: `quote-${a}`, before: 3 }, { streamId: `quote-${b}`, before: 2 }, { streamId: `quote-${randomUUID()}`, before: 1 }];
  const inTx = await tdb.db.knex.transaction((tx) => historyOf(store)(tx, wants));
  const viaApi = await tdb.db.knex.transaction((tx) => historyThroughStore(store)(tx, wants));
  t.same(inTx.get(`quote-${a}`)!.map((e) => [e.version, e.type]), [[1, 'quote.created'], [2, 'quote.consumed']], 'versions below `before` only, in order');
  t.same(inTx.get(`quote-${b}`)!.map((e) => e.version), [1]);
  for (const w of wants) t.same(viaApi.get(w.streamId) ?? [], inTx.get(w.streamId) ?? [], `${w.streamId.slice(0, 14)}…: both readers agree`);
});
