// Durability across a restart: a payin submitted to the sandbox before the process stops is settled
// after it starts again (the status check is a durable job; the sandbox keeps its books in its table).
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until, wallet } from './helpers/money.ts';
import { CHECK_JOB } from '../commands/leg-initiation.ts';

const env = { SANDBOX_SETTLE_MS: '1500' };

t.test('a pending leg survives a restart and completes once', async (t) => {
  const first = await startTestApp({ env });
  const m = await first.newMerchant();
  const customer = await newCustomer(first, m);
  const q = await quote(first, m, 'payin', { customer_id: customer, ...leg('CM_ORANGE_MOMO', 'CM', 'XAF', '20000') });
  const p = await first.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_ORANGE_MOMO', '+237690000001') }, { idem: true });
  t.equal(p.status, 201);
  await until('submitted', async () => (await first.as(m, 'GET', `/payins/${p.body.id}`)).body.provider_reference);
  const legRow = await first.app.services.knex('sandbox_provider_legs').where({ reference: p.body.id }).first();
  t.equal(legRow.state, 'pending', 'not settled before the stop');
  await first.app.stop();

  const second = await startTestApp({ env, shareWith: first });
  t.teardown(async () => {
    await second.stop();
    await first.stop();
  });
  t.ok(await second.app.services.knex('jobs').where({ kind: CHECK_JOB, key: p.body.id }).first(), 'the check is still scheduled');
  const done = await settled(second, m, 'payins', p.body.id);
  t.equal(done.status, 'completed');
  t.equal(done.provider_reference, legRow.provider_reference, 'the same leg at the provider');
  t.match(await wallet(second, m, 'XAF'), { available: '19700', reserved: '0' });
  t.equal((await second.app.services.knex('sandbox_provider_legs').where({ reference: p.body.id })).length, 1, 'initiated once');
});
