// The live projector writes a batch as one statement (projections/one-statement-batch.ts):
// rows and checkpoint together, compare-and-set on where this projector left the checkpoint. When
// another process moved it, or a projection cannot be written that way, nothing is written and the
// careful way (under the checkpoint lock) applies the batch once (bench issue 8).
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { moneyProjection } from '../projections/money.ts';
import { applyBatchToAll } from '../projections/projector.ts';
import { ensureCheckpoints, readCheckpoint, writeCheckpoint } from '../infra/checkpoints.ts';
import { applyInOneStatement } from '../projections/one-statement-batch.ts';
import { RowCache } from '../projections/row-cache.ts';
import { historyOf } from '../projections/history.ts';
import type { Projection } from '../projections/projection.ts';
import { testDatabase } from './helpers/db.ts';
import { projectionBatches } from './helpers/projection-batches.ts';
import { quoteConsumed, quoteCreated } from './helpers/quote-events.ts';

{
  async function setUp(t: Test, extra: Projection[] = []) {
    const projections = [moneyProjection, ...extra];
    const { knex, next, sent, history } = await projectionBatches(t, projections.map((p) => p.name));
    const caches = new Map(projections.map((p) => [p.name, new RowCache()]));
    const quote = async (id: string) => (await knex('quotes').where({ id }).first()) as { status: string; version: number } | undefined;
    return { knex, next, sent, caches, projections, quote, history };
  }

  t.test('a batch is one statement: rows and checkpoint together', async (t) => {
    const { knex, next, sent, caches, projections, quote, history } = await setUp(t);
    const id = randomUUID();
    const batch = await next([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]);
    sent.length = 0;
    const after = await applyInOneStatement(knex, projections, batch, history, caches, new Map([['money', 0n]]));
    t.same(after, new Map([['money', batch[batch.length - 1]!.position]]), 'the checkpoints after the batch');
    t.equal(sent.length, 1, `one statement sent: ${sent.map((s) => s.slice(0, 40)).join(' | ')}`);
    t.match(sent[0], /projector_expect_moved/);
    t.equal((await quote(id))?.status, 'active');
    t.equal(await readCheckpoint(knex, 'money'), batch[batch.length - 1]!.position);
    // The next batch folds onto the cached row, in one statement again.
    const more = await next([{ streamId: `quote-${id}`, expectedVersion: 1, events: [quoteConsumed(id)] }]);
    sent.length = 0;
    await applyInOneStatement(knex, projections, more, history, caches, after!);
    t.equal(sent.length, 1, 'no read of the stream, one statement');
    t.same(await quote(id), { ...(await quote(id)), status: 'consumed', version: 2 });
  });

  t.test('a checkpoint another process moved: nothing written, then applied once the careful way', async (t) => {
    const { knex, next, caches, projections, quote, history } = await setUp(t);
    const id = randomUUID();
    const first = await next([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]);
    const known = await applyBatchToAll(knex, projections, first, history, caches);
    const second = await next([{ streamId: `quote-${id}`, expectedVersion: 1, events: [quoteConsumed(id)] }]);
    // Another process applies the second batch first (its own caches).
    await applyBatchToAll(knex, projections, second, history, new Map([['money', new RowCache()]]));
    const moved = await readCheckpoint(knex, 'money');
    t.equal(moved, second[second.length - 1]!.position);
    // Ours plans on the checkpoint it left, which is stale: refused, the caches reset.
    await knex('quotes').where({ id }).update({ status: 'marker' }); // would be overwritten by a write
    t.equal(await applyInOneStatement(knex, projections, second, history, caches, known), undefined);
    t.equal((await quote(id))?.status, 'marker', 'nothing written');
    t.equal(await readCheckpoint(knex, 'money'), moved, 'the checkpoint left where the other process put it');
    t.equal(caches.get('money')!.get('quotes', id), undefined, 'the cache reset');
    // The careful way sees the batch applied already and skips it.
    const careful = await applyBatchToAll(knex, projections, second, history, caches);
    t.same(careful, new Map([['money', moved]]));
    t.equal((await quote(id))?.status, 'marker', 'not applied twice');
  });

  t.test('a projection that cannot be written as one statement sends the batch the careful way', async (t) => {
    const builderUser: Projection = {
      name: 'builder_user', tables: [],
      async apply(tx, events) { if (events.length > 0) await tx('quotes').where({ id: randomUUID() }).first(); },
    };
    const { knex, next, sent, caches, projections, quote, history } = await setUp(t, [builderUser]);
    const id = randomUUID();
    const batch = await next([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]);
    sent.length = 0;
    t.equal(await applyInOneStatement(knex, projections, batch, history, caches, new Map([['money', 0n], ['builder_user', 0n]])), undefined);
    t.same(sent, [], 'nothing sent');
    t.equal(await quote(id), undefined);
    t.equal(await readCheckpoint(knex, 'money'), 0n);
    await applyBatchToAll(knex, projections, batch, history, caches);
    t.equal((await quote(id))?.status, 'active', 'applied the careful way');
  });

  t.test('a checkpoint row set back by hand is not trusted either', async (t) => {
    const { knex, next, caches, projections, history } = await setUp(t);
    const id = randomUUID();
    const batch = await next([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]);
    await writeCheckpoint(knex, 'money', 5n);
    t.equal(await applyInOneStatement(knex, projections, batch, history, caches, new Map([['money', 0n]])), undefined);
  });
}

{
  t.test('a checkpoint held by another transaction (a rebuild swapping its tables in): no wait, the careful way', async (t) => {
    const tdb = await testDatabase();
    const store = new PostgresEventStore(tdb.db, systemClock);
    t.teardown(async () => { await store.close(); await tdb.teardown(); });
    const knex = tdb.db.knex;
    await ensureCheckpoints(knex, ['money']);
    const id = randomUUID();
    await store.append([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]);
    const batch = await store.readAll(0n, 1000);
    const caches = new Map([['money', new RowCache()]]);
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => { locked = r; });
    // Like the swap: the checkpoint locked, then (here: after this batch) the tables.
    const swap = knex.transaction(async (tx) => {
      await readCheckpoint(tx, 'money', true);
      locked();
      await held;
    });
    await isLocked;
    const started = Date.now();
    t.equal(await applyInOneStatement(knex, [moneyProjection], batch, historyOf(store), caches, new Map([['money', 0n]])), undefined);
    t.ok(Date.now() - started < 2_000, 'did not wait for the lock');
    t.equal(await knex('quotes').where({ id }).first(), undefined, 'nothing written');
    release();
    await swap;
    await applyBatchToAll(knex, [moneyProjection], batch, historyOf(store), caches);
    t.equal(((await knex('quotes').where({ id }).first()) as { status: string }).status, 'active');
  });
}
