// The live projector folds a stream's new events onto the state it wrote itself without reading the
// stream's earlier events from the store (bench issue 8), reads nothing for a stream a batch starts,
// and never trusts its memory once anyone else moved the projection (another process, a failed batch).
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { moneyProjection } from '../projections/money.ts';
import { applyBatchToAll } from '../projections/projector.ts';
import { RowCache } from '../projections/row-cache.ts';
import { dbLabel } from './helpers/db.ts';
import { projectionBatches } from './helpers/projection-batches.ts';
import { quoteConsumed, quoteCreated } from './helpers/quote-events.ts';

t.comment(`on ${dbLabel}`);

async function setUp(t: Test) {
  const { knex, next, sent, history } = await projectionBatches(t, [moneyProjection.name]);
  /** How many history reads (a stream's earlier events) were sent so far. */
  const reads = () => sent.filter((q) => /JOIN events e ON/.test(q)).length;
  const quote = async (id: string) => (await knex('quotes').where({ id }).first()) as { status: string; version: number };
  return { knex, next, reads, quote, history };
}

t.test('a row the projector wrote is folded onto without being read back', async (t) => {
  const { knex, next, reads, quote, history } = await setUp(t);
  const cache = new Map([[moneyProjection.name, new RowCache()]]);
  const id = randomUUID();
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]), history, cache);
  t.equal(reads(), 0, 'a stream the batch starts: nothing read');
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${id}`, expectedVersion: 1, events: [quoteConsumed(id)] }]), history, cache);
  t.equal(reads(), 0, 'its next event: folded onto the state in memory, nothing read');
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
  const before = reads();
  // Back here, a's next event (version 3): folded onto a cached version 1 it would be a gap.
  await t.resolves(applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${a}`, expectedVersion: 2, events: [quoteConsumed(a)] }]), history, mine),
    'applied onto the stream as the store has it, not the stale cached state');
  t.equal(reads(), before + 1, 'the checkpoint had moved: its earlier events read from the store');
  t.match(await quote(a), { version: 3 });

  // A failed batch (a version gap: rolled back) empties the cache: b is read again next time.
  await applyBatchToAll(knex, [moneyProjection], await next([{ streamId: `quote-${b}`, expectedVersion: 1, events: [quoteConsumed(b)] }]), history, mine);
  t.match(await quote(b), { status: 'consumed', version: 2 });
  const [bad] = await next([{ streamId: `quote-${b}`, expectedVersion: 2, events: [quoteConsumed(b)] }]);
  await t.rejects(applyBatchToAll(knex, [moneyProjection], [{ ...bad!, version: 5 }], history, mine), 'a gap fails the batch');
  const afterFail = reads();
  await applyBatchToAll(knex, [moneyProjection], [bad!], history, mine);
  t.equal(reads(), afterFail + 1, 'b read again after the failure');
  t.match(await quote(b), { version: 3 });
});
