// A read model whose view changed is rebuilt at the next start (workers/due-rebuilds.ts): a failed
// payin projected before CONTRACT §15's failure reasons (its row with the raw code, no
// provider_failure) answers the new view once the due rebuild of its projection has run; the due
// row is gone after it, and a start with nothing due rebuilds nothing.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { makeDueRebuilds } from '../workers/due-rebuilds.ts';
import { projections } from '../app/registry.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

t.test('rows projected with the old view are rebuilt to the new one; the due row goes', async (t) => {
  const m = await h.newMerchant('Due rebuild');
  const customer = await newCustomer(h, m);
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000099') }, { idem: true });
  const failed = await settled(h, m, 'payins', p.body.id);
  t.match(failed, { status: 'failed', failure_reason: 'insufficient_funds', provider_failure: { provider: 'sandbox', code: 'INSUFFICIENT_FUNDS' } });
  // The row as the code before wrote it.
  const { provider_failure: _, ...old } = failed;
  await s.knex('payins').where({ id: p.body.id }).update({ body: JSON.stringify({ ...old, failure_reason: 'INSUFFICIENT_FUNDS' }) });
  t.equal((await h.as(m, 'GET', `/payins/${p.body.id}`)).body.failure_reason, 'INSUFFICIENT_FUNDS', 'the stale row answers the raw code');
  await s.knex('projection_rebuilds_due').insert({ name: 'money', reason: 'test: failure reasons' });
  const stop = await makeDueRebuilds(() => projections).start(s);
  t.teardown(stop);
  await until('the due rebuild done', async () => (await s.knex('projection_rebuilds_due').count({ n: '*' }).first() as { n: string }).n === '0', 30_000);
  t.match((await h.as(m, 'GET', `/payins/${p.body.id}`)).body, { failure_reason: 'insufficient_funds', provider_failure: { code: 'INSUFFICIENT_FUNDS' } }, 'rebuilt to the new view');
});

t.test('a new database has nothing due', async (t) => {
  t.same(await s.knex('projection_rebuilds_due').select('name'), []);
});
