// Real operator connections through the whole service (CONTRACT §15, issue 41): the MTN MoMo and
// pawaPay adapters against simulators of their APIs (test/simulators/, written from the providers'
// documentation), the routing set through the operator API, and the rules that keep money exact:
// a leg stays with the provider that took it, fails over only when the first certainly did not take
// it, an initiation in doubt is settled by status queries alone, callbacks are hints.
import t from 'tap';
import { startTestApp, request } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until } from './helpers/money.ts';
import { simulatedProviders } from './helpers/providers.ts';

const { mtn, pawapay, env, close } = await simulatedProviders({ n: 0 });
const h = await startTestApp({ env });
t.teardown(async () => {
  await h.stop();
  await close();
});
const s = h.app.services;

const routing = (code: string, providers: unknown) => h.admin('PUT', `/admin/operators/${code}/routing`, { providers });
const providerOf = async (reference: string) => ((await s.knex('provider_legs').where({ reference }).first('provider')) as { provider: string } | undefined)?.provider;
const mtnPayins = (payinId: string) => mtn.requests.filter((r) => r.method === 'POST' && r.path === '/collection/v1_0/requesttopay' && r.headers['x-reference-id'] === payinId);
const pawapayDeposits = (payinId: string) => pawapay.initiations('deposits').filter((d) => d.depositId === payinId);

const m = await h.newMerchant('Real operators');
const customer = await newCustomer(h, m, 'CM', '+237670000001');
async function payin(phone = '+237670000001', operator = 'CM_MTN_MOMO', country = 'CM', currency = 'XAF'): Promise<string> {
  const q = await quote(h, m, 'payin', leg(operator, country, currency, '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party(country, operator, phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  return p.body.id as string;
}

t.test('routing through the operator API: default sandbox, checked names, only providers configured that serve the operator', async (t) => {
  t.same((await h.admin('GET', '/admin/operators/CM_MTN_MOMO/routing')).body, { operator_code: 'CM_MTN_MOMO', providers: ['sandbox'] });
  const set = await routing('CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  t.same(set.body, { operator_code: 'CM_MTN_MOMO', providers: ['mtn_momo', 'pawapay'] });
  t.same((await h.admin('GET', '/admin/operators/CM_MTN_MOMO/routing')).body.providers, ['mtn_momo', 'pawapay']);
  for (const [code, providers, status, error] of [
    ['SN_WAVE_MOMO', ['mtn_momo'], 400, 'provider_unavailable'],
    ['TG_MOOV_MOMO', ['pawapay'], 400, 'provider_unavailable'],
    ['CM_MTN_MOMO', ['nope'], 400, 'bad_request'],
    ['CM_MTN_MOMO', ['mtn_momo', 'mtn_momo'], 400, 'bad_request'],
    ['CM_MTN_MOMO', [], 400, 'bad_request'],
    ['CM_MTN_MOMO', ['sandbox', 'mtn_momo', 'pawapay', 'sandbox'], 400, 'bad_request'],
    ['XX_NOPE_MOMO', ['sandbox'], 404, 'not_found'],
  ] as const) {
    const r = await routing(code, providers);
    t.equal(r.status, status, `${code} ${JSON.stringify(providers)}`);
    t.equal(r.body.error.code, error);
  }
  t.same((await h.admin('GET', '/admin/operators/CM_MTN_MOMO/routing')).body.providers, ['mtn_momo', 'pawapay'], 'refusals changed nothing');
  t.equal((await request(h.url, 'PUT', '/admin/operators/CM_MTN_MOMO/routing', { body: { providers: ['sandbox'] } })).status, 401, 'operators only');
});

t.test('a payin through MTN completes by status queries alone, under our reference, amount and MSISDN as MTN wants them', async (t) => {
  const id = await payin();
  t.equal((await settled(h, m, 'payins', id)).status, 'completed');
  const sent = mtnPayins(id);
  t.equal(sent.length, 1, 'one request-to-pay');
  t.match(sent[0]!.body, { amount: '5000', currency: 'EUR', payer: { partyIdType: 'MSISDN', partyId: '237670000001' } });
  t.equal(await providerOf(id), 'mtn_momo');
  t.equal(pawapayDeposits(id).length, 0, 'pawaPay never asked');
});

t.test('MTN down (connection refused, nothing sent): the leg fails over to pawaPay', async (t) => {
  await mtn.down();
  t.teardown(() => mtn.up());
  const id = await payin();
  t.equal((await settled(h, m, 'payins', id)).status, 'completed');
  t.equal(await providerOf(id), 'pawapay');
  t.match(pawapayDeposits(id), [{ depositId: id, clientReferenceId: id, amount: '5000', currency: 'XAF', payer: { accountDetails: { phoneNumber: '237670000001', provider: 'MTN_MOMO_CMR' } } }]);
});

t.test('MTN refuses the leg (a documented 4xx): pawaPay takes it', async (t) => {
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 400, body: { code: 'NOT_ALLOWED', message: 'not allowed' }, record: false });
  const id = await payin();
  t.equal((await settled(h, m, 'payins', id)).status, 'completed');
  t.equal(await providerOf(id), 'pawapay');
  t.equal(pawapayDeposits(id).length, 1);
});

t.test('MTN answers 500 after recording the leg: in doubt, it stays with MTN, settled by its status, never sent twice', async (t) => {
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 500, record: true });
  const before = BigInt(await credited());
  const id = await payin();
  const done = await settled(h, m, 'payins', id);
  t.equal(done.status, 'completed');
  t.equal(await providerOf(id), 'mtn_momo');
  t.equal(pawapayDeposits(id).length, 0, 'no failover from a leg in doubt');
  t.equal(mtnPayins(id).length, 1, 'sent once');
  t.equal(mtn.legs.get(id)?.status, 'SUCCESSFUL');
  t.equal(BigInt(await credited()) - before, BigInt(done.receive_amount), 'credited once');
});

t.test('MTN times out without recording: in doubt; its status finds nothing, so it is asked again under the same reference', async (t) => {
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, record: false });
  const id = await payin();
  t.equal((await settled(h, m, 'payins', id)).status, 'completed');
  t.equal(mtnPayins(id).length, 2, 'the same X-Reference-Id twice: the first never reached MTN\'s books');
  t.equal(pawapayDeposits(id).length, 0);
});

t.test('every provider refuses: the payin fails, nothing moved', async (t) => {
  await routing('CM_MTN_MOMO', ['mtn_momo']);
  t.teardown(() => routing('CM_MTN_MOMO', ['mtn_momo', 'pawapay']));
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 400, body: { code: 'NOT_ALLOWED', message: 'not allowed' }, record: false });
  const before = await credited();
  const id = await payin();
  const done = await settled(h, m, 'payins', id);
  t.equal(done.status, 'failed');
  t.equal(await credited(), before, 'the wallet unchanged');
});

t.test('callbacks are hints: a forged one changes nothing; a real one has the status asked at once', async (t) => {
  const phone = '+237670000042';
  mtn.plan('237670000042', { status: 'PENDING' });
  const id = await payin(phone);
  await until('MTN asked the status', async () => mtn.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/requesttopay/${id}`)));
  const forged = await request(h.url, 'PUT', `/providers/mtn_momo/callbacks/${id}`, { body: { externalId: id, status: 'SUCCESSFUL', financialTransactionId: '1' } });
  t.equal(forged.status, 200, 'answered 200');
  t.equal((await h.as(m, 'GET', `/payins/${id}`)).body.status, 'pending', 'MTN still says PENDING: nothing recorded');
  const leg = mtn.legs.get(id)!;
  leg.planned = { status: 'SUCCESSFUL' };
  mtn.settle(id);
  const hinted = await request(h.url, 'POST', `/providers/mtn_momo/callbacks/${id}`, { body: { externalId: id, status: 'SUCCESSFUL' } });
  t.equal(hinted.status, 200);
  t.equal((await h.as(m, 'GET', `/payins/${id}`)).body.status, 'completed', 'completed as the callback is answered');
  t.equal((await request(h.url, 'POST', '/providers/mtn_momo/callbacks/not-a-uuid', { raw: 'not json', headers: { 'content-type': 'application/json' } })).status, 400, 'not well-formed: 400');
  t.equal((await request(h.url, 'POST', '/providers/pawapay/callbacks', { body: { nothing: 'here' } })).status, 400, 'pawaPay: no id, 400');
  t.equal((await request(h.url, 'POST', '/providers/pawapay/callbacks', { body: { depositId: '00000000-0000-4000-8000-000000000000' } })).status, 200, 'an unknown leg: 200, nothing done');
});

t.test('a callback whose status query fails is still answered 200; the scheduled checks settle the leg', async (t) => {
  mtn.plan('237670000043', { status: 'PENDING' });
  const id = await payin('+237670000043');
  await until('MTN asked the status', async () => mtn.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/requesttopay/${id}`)));
  mtn.legs.get(id)!.planned = { status: 'SUCCESSFUL' };
  mtn.fault({ method: 'GET', path: `/collection/v1_0/requesttopay/${id}`, status: 500, times: 1 });
  const hinted = await request(h.url, 'PUT', `/providers/mtn_momo/callbacks/${id}`, { body: { externalId: id, status: 'SUCCESSFUL' } });
  t.equal(hinted.status, 200, `answered 200 (${hinted.status} ${hinted.text})`);
  mtn.settle(id);
  t.equal((await settled(h, m, 'payins', id)).status, 'completed', 'settled by a later status query');
});

t.test('a refund of an MTN payin goes back through MTN, naming the payin\'s leg', async (t) => {
  const id = await payin('+237670000007');
  await settled(h, m, 'payins', id);
  const r = await h.as(m, 'POST', '/refunds', { payin_id: id, amount: '1000' }, { idem: true });
  t.equal(r.status, 201, r.text);
  const done = await until('refund settled', async () => {
    const x = await h.as(m, 'GET', `/refunds/${r.body.id}`);
    return x.body.status === 'completed' || x.body.status === 'failed' ? x.body : undefined;
  });
  t.equal(done.status, 'completed');
  t.equal(await providerOf(r.body.id), 'mtn_momo');
  t.match(mtn.requests.find((x) => x.path === '/disbursement/v1_0/refund')?.body, { amount: '1000', referenceIdToRefund: id });
});

t.test('a payout through pawaPay from the wallet', async (t) => {
  await routing('SN_WAVE_MOMO', ['pawapay']);
  await topUp(h, m, 'XOF', '10000');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '2000'));
  const recipient = { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000001', recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' };
  const p = await h.as(m, 'POST', '/payouts', { quote_id: q.id, customer_id: customer, payment_reason_text: 'Invoice', recipient }, { idem: true });
  t.equal(p.status, 201, p.text);
  t.equal((await settled(h, m, 'payouts', p.body.id)).status, 'completed');
  t.match(pawapay.initiations('payouts').find((x) => x.payoutId === p.body.id), { amount: p.body.receive_amount, currency: 'XOF', recipient: { accountDetails: { provider: 'WAVE_SEN' } } });
});

async function credited(): Promise<string> {
  return (await wallets()).XAF!;
}

async function wallets(): Promise<Record<string, string>> {
  const r = await h.as(m, 'GET', '/wallets');
  return Object.fromEntries(r.body.data.map((w: { currency: string; available: string }) => [w.currency, w.available]));
}
