// Migration 036: provider_legs rows from before the asked mark (commands/provider-legs.ts) are marked
// as asked wherever their provider can refuse a leg, so a leg in flight at the upgrade whose earlier
// start asked its provider has its next start check a refusal against the leg's status. The
// sandbox's rows and holds in progress are left as they are. Down and up again.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import * as m036 from '../infra/migrations/036_provider_legs_asked_mark.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('rows of MTN and pawaPay with no mark are marked asked; the sandbox\'s and a hold in progress are not', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const held = new Date(Date.now() + 60_000);
  const rows = [['mtn_momo', null], ['pawapay', null], ['sandbox', null], ['mtn_momo', held]] as const;
  const refs = rows.map(() => randomUUID());
  await knex('provider_legs').insert(rows.map(([provider, until], i) => ({
    reference: refs[i], owner: 'payin', provider, provider_leg_id: refs[i], kind: 'collection', created_at: new Date(), starting_until: until,
  })));
  const marks = async () => {
    const r = await knex.raw<{ rows: Array<{ reference: string; mark: string | null }> }>(
      'SELECT reference, starting_until::text AS mark FROM provider_legs WHERE reference = ANY (?::text[])', [refs]);
    const byRef = new Map(r.rows.map((x) => [x.reference, x.mark]));
    return refs.map((ref) => byRef.get(ref));
  };
  await m036.up(knex);
  const after = await marks();
  t.same(after.slice(0, 3), ['-infinity', '-infinity', null], 'MTN\'s and pawaPay\'s marked asked, the sandbox\'s not');
  t.not(after[3], '-infinity', 'a hold in progress keeps its time');
  await m036.down(knex);
  t.same((await marks()).slice(0, 3), [null, null, null], 'down: the marks gone');
});
