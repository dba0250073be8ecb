// The live projector folds a stream's new events onto the state it wrote itself without reading the
// stream's earlier events from the store (bench issue 8), reads nothing for a stream a batch starts,
// and never trusts its memory once anyone else moved the projection (another process, a failed batch).
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../src/infra/eventstore/postgres.ts';
import { systemClock } from '../src/infra/clock.ts';
import { moneyProjection } from '../src/projections/money.ts';
import { applyBatchToAll, ensureCheckpoints } from '../src/projections/projector.ts';
import { RowCache } from '../src/projections/row-cache.ts';
import { historyOf } from '../src/projections/history.ts';
import type { RecordedEvent } from '../src/infra/eventstore/types.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { quoteConsumed, quoteCreated } from './helpers/quote-events.ts';

t.comment(`on ${dbLabel}`);

async function setUp(t: Test) {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  await ensureCheckpoints(tdb.db.knex, [moneyProjection.name]);
  const reads: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/JOIN events e ON/.test(q.sql)) reads.push(q.sql); };
  tdb.db.knex.on('query', onQuery);
  t.teardown(() => { tdb.db.knex.removeListener('query', onQuery); });
  let position = 0n;
  /** Appends, then returns the events since the last call (what the projector's next batch holds). */
  const next = async (appends: Parameters<typeof store.append>[0]): Promise<RecordedEvent[]> => {
    await store.append(appends);
    const events = await store.readAll(position, 1000);
    position = events[events.length - 1]!.position;
    return events;
  };
  const quote = async (id: string) => (await tdb.db.knex('quotes').where({ id }).first()) as { status: string; version: number };
  return { knex: tdb.db.knex, next, reads, quote, history: historyOf(store) };
}

t.test('a row the projector wrote is folded onto without being read back', async (t) => {
  const { knex, next, reads, quote, history } = await setUp(t);
  const cache = new Map([[moneyProjection.name, new RowCache()]]);
  const id = randomUUID();
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]), history, cache);
  t.equal(reads.length, 0, 'a stream the batch starts: nothing read');
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${id}`, expectedVersion: 1, events: [quoteConsumed(id)] }]), history, cache);
  t.equal(reads.length, 0, 'its next event: folded onto the state in memory, nothing read');
  t.match(await quote(id), { status: 'consumed', version: 2 }, 'the row is right');
});

t.test('moved by someone else, or after a failed batch, the rows are read again', async (t) => {
  const { knex, next, reads, quote, history } = await setUp(t);
  const mine = new Map([[moneyProjection.name, new RowCache()]]);
  const theirs = new Map([[moneyProjection.name, new RowCache()]]);
  const [a, b] = [randomUUID(), randomUUID()];
  const merchant = randomUUID();
  await applyBatchToAll(knex, [moneyProjection], await next([
    { streamId: `quote-${a}`, expectedVersion: 0, events: [quoteCreated(a, merchant)] },
    { streamId: `quote-${b}`, expectedVersion: 0, events: [quoteCreated(b, merchant)] },
  ]), history, mine);
  // Another process applies the next batch: quote a consumed.
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${a}`, expectedVersion: 1, events: [quoteConsumed(a)] }]), history, theirs);
  const before = reads.length;
  // Back here, a's next event (version 3): folded onto a cached version 1 it would be a gap.
  await t.resolves(applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${a}`, expectedVersion: 2, events: [quoteConsumed(a)] }]), history, mine),
    'applied onto the stream as the store has it, not the stale cached state');
  t.equal(reads.length, before + 1, 'the checkpoint had moved: its earlier events read from the store');
  t.match(await quote(a), { version: 3 });

  // A failed batch (a version gap: rolled back) empties the cache: b is read again next time.
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${b}`, expectedVersion: 1, events: [quoteConsumed(b)] }]), history, mine);
  t.match(await quote(b), { status: 'consumed', version: 2 });
  const [bad] = await next([{ streamId: `quote-${b}`, expectedVersion: 2, events: [quoteConsumed(b)] }]);
  await t.rejects(applyBatchToAll(knex, [moneyProjection], [{ ...bad!, version: 5 }], history, mine), 'a gap fails the batch');
  const afterFail = reads.length;
  await applyBatchToAll(knex, [moneyProjection], [bad!], history, mine);
  t.equal(reads.length, afterFail + 1, 'b read again after the failure');
  t.match(await quote(b), { version: 3 });
});
