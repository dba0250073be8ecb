// Migration 028: the read models that hold a failed payment (a payin, payout or refund failed, a
// transfer with a failed leg) are listed for a rebuild at the next start (workers/due-rebuilds.ts);
// a database without one lists nothing. Down and up again.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import * as m028 from '../infra/migrations/028_rebuild_failed_payments.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('due only where a failed payment was projected with the old view', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const due = async () => (await knex('projection_rebuilds_due').orderBy('name').select('name')).map((r: { name: string }) => r.name);
  await m028.down(knex);
  await m028.up(knex);
  t.same(await due(), [], 'nothing failed: nothing to rebuild');

  await m028.down(knex);
  const at = new Date();
  const base = { merchant_id: randomUUID(), customer_id: randomUUID(), quote_id: randomUUID(), created_at: at, updated_at: at, version: 3 };
  await knex('payins').insert({ ...base, id: randomUUID(), status: 'failed', body: JSON.stringify({ failure_reason: 'INSUFFICIENT_FUNDS' }) });
  // A transfer completed after a failed disbursement and a relaunch: a leg failed.
  await knex('transfers').insert({ ...base, id: randomUUID(), status: 'completed', payin_status: 'completed', payout_status: 'completed',
    body: JSON.stringify({ failure_reason: null, execution: { payouts: [{ failure_reason: 'RECIPIENT_NOT_FOUND' }] } }) });
  await m028.up(knex);
  t.same(await due(), ['money', 'transfers'], 'the projections that hold them');
});
