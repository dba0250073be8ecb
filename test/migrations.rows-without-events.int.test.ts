// Migration 015 (bench issue 8): the payment and transfer rows keep no event lists. Going back adds
// the column the older code folds and empties those read models with their checkpoints at 0 (that
// code needs every row's events, which no row has any more), so they refill from the first event.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { moneyProjection } from '../projections/money.ts';
import { applyBatchToAll } from '../projections/projector.ts';
import { ensureCheckpoints, readCheckpoint } from '../infra/checkpoints.ts';
import { historyOf } from '../projections/history.ts';
import * as m015 from '../infra/migrations/015_rows_without_events.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { quoteCreated } from './helpers/quote-events.ts';

t.comment(`on ${dbLabel}`);

t.test('no event lists in the rows; down and up again leave a projection that refills', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const knex = tdb.db.knex;
  const columns = async () => (await knex.raw<{ rows: Array<{ col: string }> }>(
    `SELECT table_name || '.' || column_name AS col FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_name = 'events' AND table_name IN ('quotes', 'payins', 'payouts', 'transfers')`)).rows;
  t.same(await columns(), [], 'no read model row carries its events');

  await ensureCheckpoints(knex, [moneyProjection.name]);
  const id = randomUUID();
  await store.append([{ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, randomUUID())] }]);
  const apply = async () => applyBatchToAll(knex, [moneyProjection], await store.readAll(await readCheckpoint(knex, 'money'), 1000), historyOf(store));
  await apply();
  t.equal((await knex('quotes').where({ id })).length, 1, 'the quote has its row');

  await m015.down(knex);
  t.equal((await columns()).length, 4, 'down: the event lists are back');
  t.equal(Number((await knex('quotes').count({ n: '*' }))[0]!.n), 0, 'down: the rows that had none are gone');
  t.equal(await readCheckpoint(knex, 'money'), 0n, 'down: the projection starts again from the first event');

  await m015.up(knex);
  t.same(await columns(), [], 'up again: dropped');
  await apply();
  t.match(await knex('quotes').where({ id }).first(), { version: 1, status: 'active' }, 'refilled from the store');
});
