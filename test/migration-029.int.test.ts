// Migration 029 (payment links): payins projected before it have no payment_link_id in their body, so
// the money read model is listed for an online rebuild at the next start (workers/due-rebuilds.ts),
// only where payins exist. Down and up again.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import * as m029 from '../infra/migrations/029_payment_links.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('the money model is due for a rebuild only where payins were projected', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const due = async () => (await knex('projection_rebuilds_due').orderBy('name').select('name', 'reason')) as Array<{ name: string; reason: string }>;
  await m029.down(knex);
  await m029.up(knex);
  t.same(await due(), [], 'no payin: nothing to rebuild');
  t.same(await knex('payment_links').select('id'), [], 'the payment links table');

  await m029.down(knex);
  const at = new Date();
  await knex('payins').insert({
    id: randomUUID(), merchant_id: randomUUID(), customer_id: randomUUID(), quote_id: randomUUID(), status: 'completed',
    created_at: at, updated_at: at, version: 3, body: JSON.stringify({ status: 'completed' }),
  });
  await m029.up(knex);
  t.same(await due(), [{ name: 'money', reason: 'payment_link_id on payins' }], 'the payins\' model');
  t.same(await knex('payins').select('payment_link_id'), [{ payment_link_id: null }], 'the new column, null');
});
