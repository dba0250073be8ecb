// The operator's KYC requirement (routing kyc_required_operators): a payout, or a transfer whose
// disbursement goes through an operator that requires KYC, answers 400 kyc_required unless the
// customer's KYC is verified; nothing is held, the quote stays active, and the refusal is replayed
// for the same Idempotency-Key. Other operators need nothing.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { leg, quote, topUp, wallet } from './helpers/money.ts';
import { newCustomer, passport, reviewed, startFileServer } from './helpers/kyc.ts';

const files = await startFileServer();
t.teardown(() => files.close());
const h = await startTestApp({ env: { KYC_FETCH_TIMEOUT_MS: '2500' } });
t.teardown(() => h.stop());

const recipient = (operator = 'SN_WAVE_MOMO', phone = '+221770000001') => ({
  country_code: 'SN', rail_type: 'mobile_money', operator_code: operator, phone, recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye',
});
const payer = { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' };

async function merchant(kycRequired: string[]): Promise<MerchantCreds> {
  const m = await h.newMerchant('KYC gate');
  const r = await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'], kyc_required_operators: kycRequired });
  if (r.status !== 200) throw new Error(`routing ${r.status} ${r.text}`);
  await topUp(h, m, 'XOF', '100000');
  return m;
}

async function kycTo(m: MerchantCreds, customerId: string, file: '/id.png' | '/missing') {
  const r = await h.as(m, 'POST', `/customers/${customerId}/kyc`, { documents: [passport({ front_file_url: `${files.url}${file}` })] });
  if (r.status !== 201) throw new Error(`kyc ${r.status} ${r.text}`);
  return reviewed(h, m, customerId);
}

const payout = (m: MerchantCreds, customerId: string, quoteId: string, operator = 'SN_WAVE_MOMO', idem: string | boolean = true) =>
  h.as(m, 'POST', '/payouts', { quote_id: quoteId, customer_id: customerId, payment_reason_text: 'Invoice 7', recipient: recipient(operator) }, { idem });

async function transferQuote(m: MerchantCreds) {
  const q = await h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000',
  }, { idem: true });
  if (q.status !== 201) throw new Error(`quote ${q.status} ${q.text}`);
  return q.body;
}
const transfer = (m: MerchantCreds, customerId: string, quoteId: string, idem: string | boolean = true) =>
  h.as(m, 'POST', '/transfers', { quote_id: quoteId, customer_id: customerId, payer, recipient: recipient() }, { idem });

t.test('operator API: kyc_required_operators is set with the routing, shown on the merchant, validated', async (t) => {
  const m = await h.newMerchant();
  const r = await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { kyc_required_operators: ['SN_WAVE_MOMO', 'SN_WAVE_MOMO', 'CM_MTN_MOMO'] });
  t.equal(r.status, 200);
  t.same(r.body.kyc_required_operators, ['SN_WAVE_MOMO', 'CM_MTN_MOMO'], 'deduplicated');
  t.ok(r.body.payout_operators.includes('SN_WAVE_MOMO'), 'the rest of the routing is kept');
  t.same((await h.admin('GET', `/admin/merchants/${m.merchantId}`)).body.routing.kyc_required_operators, ['SN_WAVE_MOMO', 'CM_MTN_MOMO']);
  const bad = await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { kyc_required_operators: ['XX_NOPE_MOMO'] });
  t.equal(bad.status, 400);
  t.match(bad.body.error.details, [{ field: /^kyc_required_operators/ }]);
  const ops = await h.as(m, 'GET', '/operators');
  t.equal(ops.body.data.find((o: { operator_code: string }) => o.operator_code === 'SN_WAVE_MOMO')?.kyc_required, true, 'GET /operators tells the merchant');
});

t.test('payout: 400 kyc_required until the KYC is verified; nothing held, quote still active, refusal replayed', async (t) => {
  const m = await merchant(['SN_WAVE_MOMO']);
  const c = await newCustomer(h, m);
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000'));
  const refused = await payout(m, c, q.id, 'SN_WAVE_MOMO', 'gate-payout-1');
  t.equal(refused.status, 400);
  t.equal(refused.body.error.code, 'kyc_required');
  t.match(refused.body.error.details, [{ field: 'customer_id' }]);
  t.match(refused.body.error.message, /SN_WAVE_MOMO requires the customer's KYC to be verified; it is not_started/);
  const replay = await payout(m, c, q.id, 'SN_WAVE_MOMO', 'gate-payout-1');
  t.equal(replay.status, 400);
  t.equal(replay.body._meta?.idempotency_replayed, true, 'a business refusal is stored and replayed');
  t.match(await wallet(h, m, 'XOF'), { available: '100000', reserved: '0' }, 'nothing held');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'the quote is not consumed');

  t.equal((await kycTo(m, c, '/missing')).kyc_status, 'rejected');
  const stillRefused = await payout(m, c, q.id);
  t.equal(stillRefused.body.error?.code, 'kyc_required', 'rejected KYC: still refused');
  t.match(stillRefused.body.error.message, /it is rejected/);

  t.equal((await kycTo(m, c, '/id.png')).kyc_status, 'verified');
  const ok = await payout(m, c, q.id);
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.status, 'pending');
});

t.test('payout: a pending KYC is not enough; an operator that does not require KYC needs nothing', async (t) => {
  const m = await merchant(['SN_WAVE_MOMO']);
  const c = await newCustomer(h, m);
  const sub = await h.as(m, 'POST', `/customers/${c}/kyc`, { documents: [passport({ front_file_url: `${files.url}/slow` })] });
  t.equal(sub.body.kyc_status, 'pending');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000'));
  const r = await payout(m, c, q.id);
  t.equal(r.body.error?.code, 'kyc_required');
  t.match(r.body.error.message, /it is pending/);
  const free = await quote(h, m, 'payout', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '10000'));
  const ok = await payout(m, c, free.id, 'SN_ORANGE_MOMO');
  t.equal(ok.status, 201, 'SN_ORANGE_MOMO does not require KYC');
  await reviewed(h, m, c);
});

t.test('no operator requires KYC (the default): payouts and transfers need nothing', async (t) => {
  const m = await merchant([]);
  const c = await newCustomer(h, m);
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000'));
  t.equal((await payout(m, c, q.id)).status, 201);
  const tq = await transferQuote(m);
  t.equal((await transfer(m, c, tq.id)).status, 201);
});

t.test('transfer: the disbursing operator requiring KYC refuses with kyc_required until verified', async (t) => {
  const m = await merchant(['SN_WAVE_MOMO']);
  const c = await newCustomer(h, m);
  const q = await transferQuote(m);
  const refused = await transfer(m, c, q.id, 'gate-transfer-1');
  t.equal(refused.status, 400);
  t.equal(refused.body.error.code, 'kyc_required');
  t.match(refused.body.error.details, [{ field: 'customer_id' }]);
  t.equal((await transfer(m, c, q.id, 'gate-transfer-1')).body._meta?.idempotency_replayed, true);
  t.match(await wallet(h, m, 'XOF'), { available: '100000', reserved: '0' }, 'nothing held');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active');
  t.equal((await kycTo(m, c, '/id.png')).kyc_status, 'verified');
  const ok = await transfer(m, c, q.id);
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.status, 'pending');
});

t.test('transfer: only the disbursing operator counts (collecting from a payer needs no KYC)', async (t) => {
  const m = await merchant(['CM_MTN_MOMO']);
  const c = await newCustomer(h, m);
  const q = await transferQuote(m);
  t.equal((await transfer(m, c, q.id)).status, 201);
});
