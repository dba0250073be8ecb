// Payouts and wallets over HTTP: top-ups, the hold at create, posting on completion, release on
// failure, insufficient_balance (stored and replayed by idempotency), and 20 concurrent payouts
// against a balance covering only some of them. The same file runs on PGlite and PostgreSQL.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, request } from './helpers/app.ts';
import { dbLabel } from './helpers/db.ts';
import { leg, newCustomer, quote, settled, topUp, until, wallet } from './helpers/money.ts';
import { providers } from '../infra/providers/index.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const recipient = (phone: string) => ({
  country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual',
  first_name: 'Awa', last_name: 'Ndiaye', email: 'awa@example.com', city: 'Dakar',
});

async function setup() {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  return { m, customer };
}

const payout = (m: Parameters<typeof h.as>[0], customer: string, quoteId: string, phone: string, idem: string | boolean = true) =>
  h.as(m, 'POST', '/payouts', { quote_id: quoteId, customer_id: customer, payment_reason_text: 'Supplier invoice 42', recipient: recipient(phone), metadata: { invoice: '42' } }, { idem });

t.test('top-ups: 201 ledger entry, validation, unknown merchant 404; GET /wallets lists both currencies', async (t) => {
  const { m } = await setup();
  const empty = await h.as(m, 'GET', '/wallets');
  t.equal(empty.status, 200);
  t.match(empty.body.data, [{ currency: 'XAF', available: '0', reserved: '0', updated_at: String }, { currency: 'XOF', available: '0', reserved: '0' }]);
  const r = await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: '50000.00' });
  t.equal(r.status, 201);
  t.match(r.body, { id: String, merchant_id: m.merchantId, currency: 'XOF', amount: '50000', type: 'top_up', created_at: String });
  t.match(await wallet(h, m, 'XOF'), { available: '50000', reserved: '0' });
  t.equal((await h.admin('POST', `/admin/merchants/${randomUUID()}/wallets/XOF/top-ups`, { amount: '1000' })).status, 404);
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/EUR/top-ups`, { amount: '1000' })).status, 400, 'a currency not offered is a 400 naming it (issue 31)');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: 1000 })).body.error.code, 'bad_request');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: '10.5' })).body.error.code, 'bad_request');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: '50' })).body.error.code, 'amount_out_of_range');
  t.equal((await h.as(m, 'POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: '1000' })).status, 401, 'operators only');
  const entries = await s.knex('ledger_entries').where({ merchant_id: m.merchantId, movement: 'top_up' });
  t.same(entries.map((e: any) => [e.account, e.side, String(e.amount)]).sort(), [
    [`merchant:${m.merchantId}:available`, 'credit', '50000'], ['platform:funding', 'debit', '50000'],
  ].sort(), 'recorded as funding in the ledger');
});

t.test('payout: send_amount held at create, reserved debited on completion', async (t) => {
  const { m, customer } = await setup();
  await topUp(h, m, 'XOF', '20000');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000'));
  const p = await payout(m, customer, q.id, '+221770000098'); // stays pending until the callback below
  t.equal(p.status, 201);
  t.match(p.body, {
    status: 'pending', send_amount: '10000', receive_amount: '9900', total_fee: '100', payment_reason_text: 'Supplier invoice 42',
    recipient: { phone: '+221770000098', recipient_type: 'individual', first_name: 'Awa' }, metadata: { invoice: '42' },
    wallet_impact: { effects: [{ when: 'created', applied: true }, { when: 'completed', applied: false }, { when: 'failed', applied: false }] },
  });
  t.match(await wallet(h, m, 'XOF'), { available: '10000', reserved: '10000' }, 'held at create');
  await until('submitted', async () => (await h.as(m, 'GET', `/payouts/${p.body.id}`)).body.provider_reference);
  const cb = await providers(s).sandbox.callbackFor(p.body.id, { state: 'completed' });
  t.equal((await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers })).status, 200);
  const done = await settled(h, m, 'payouts', p.body.id);
  t.match(done, { status: 'completed', completed_at: String, wallet_impact: { effects: [{ applied: true }, { applied: true }, { applied: false }] } });
  t.match(await wallet(h, m, 'XOF'), { available: '10000', reserved: '0' }, 'reserved debited');
  const posted = await s.knex('ledger_entries').where({ reference_id: p.body.id, movement: 'post' }).orderBy('posting_index');
  t.same(posted.map((e: any) => [e.account, e.side, String(e.amount)]), [
    [`merchant:${m.merchantId}:reserved`, 'debit', '10000'], ['provider:SN_WAVE_MOMO', 'credit', '9900'], ['platform:fees', 'credit', '100'],
  ]);
  t.equal((await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers })).status, 200, 'replayed');
  t.match(await wallet(h, m, 'XOF'), { available: '10000', reserved: '0' }, 'no second debit');
  const other = await h.newMerchant('Other');
  t.equal((await h.as(other, 'GET', `/payouts/${p.body.id}`)).status, 404);
});

t.test('payout completing by itself through the sandbox', async (t) => {
  const { m, customer } = await setup();
  await topUp(h, m, 'XOF', '5000');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
  const p = await payout(m, customer, q.id, '+221770000001');
  t.match(await settled(h, m, 'payouts', p.body.id), { status: 'completed', provider_reference: /^SBX-/ });
  t.match(await wallet(h, m, 'XOF'), { available: '0', reserved: '0' });
});

t.test('payout failure (recipient …99) releases the hold', async (t) => {
  const { m, customer } = await setup();
  await topUp(h, m, 'XOF', '8000');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '8000'));
  const p = await payout(m, customer, q.id, '+221770000099');
  t.equal(p.status, 201);
  const failed = await settled(h, m, 'payouts', p.body.id);
  t.match(failed, {
    status: 'failed', failure_reason: 'account_not_found', provider_failure: { provider: 'sandbox', code: 'RECIPIENT_NOT_FOUND' },
    history: [{ status: 'created' }, { status: 'pending' }, { status: 'failed', reason: 'account_not_found' }],
  });
  t.match(await wallet(h, m, 'XOF'), { available: '8000', reserved: '0' }, 'released back to available');
});

t.test('insufficient_balance: refused, stored and replayed by idempotency, the quote stays active', async (t) => {
  const { m, customer } = await setup();
  await topUp(h, m, 'XOF', '1000');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
  const first = await payout(m, customer, q.id, '+221770000001', 'short-1');
  t.equal(first.status, 400);
  t.equal(first.body.error.code, 'insufficient_balance');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'the quote is not consumed');
  await topUp(h, m, 'XOF', '10000');
  const replay = await payout(m, customer, q.id, '+221770000001', 'short-1');
  t.equal(replay.status, 400, 'the stored refusal is replayed, although the balance now covers it');
  t.equal(replay.body.error.code, 'insufficient_balance');
  t.same(replay.body._meta, { idempotency_key: 'short-1', idempotency_replayed: true });
  const fresh = await payout(m, customer, q.id, '+221770000098', 'short-2'); // stays pending: the hold stays visible
  t.equal(fresh.status, 201, 'a new key runs again');
  t.match(await wallet(h, m, 'XOF'), { available: '6000', reserved: '5000' });
});

t.test(`20 concurrent payouts against a balance covering 7: exactly 7 succeed (${dbLabel})`, async (t) => {
  const { m, customer } = await setup();
  await topUp(h, m, 'XOF', '7500');
  const quotes = await Promise.all(Array.from({ length: 20 }, () => quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'))));
  const answers = await Promise.all(quotes.map((q) => payout(m, customer, q.id, '+221770000098')));
  const ok = answers.filter((a) => a.status === 201);
  t.equal(ok.length, 7, 'exactly N succeed');
  t.same(answers.filter((a) => a.status !== 201).map((a) => a.body.error.code), Array(13).fill('insufficient_balance'), 'the rest are refused');
  t.match(await wallet(h, m, 'XOF'), { available: '500', reserved: '7000' });
  // Available never went below zero: replay the merchant's available account in ledger order.
  const rows = await s.knex('ledger_entries').where({ merchant_id: m.merchantId, account: `merchant:${m.merchantId}:available` }).orderBy([{ column: 'global_position' }, { column: 'posting_index' }]);
  let balance = 0n;
  let lowest = 0n;
  for (const r of rows as Array<{ side: string; amount: string }>) {
    balance += (r.side === 'credit' ? 1n : -1n) * BigInt(r.amount);
    if (balance < lowest) lowest = balance;
  }
  t.equal(balance, 500n);
  t.equal(lowest, 0n, 'available never below zero');
  t.comment(`races: 20 concurrent payouts on a wallet of 7x (${dbLabel}): ${ok.length} succeeded, ${answers.length - ok.length} insufficient_balance, overdraft=${-lowest}`);
  const consumed = await s.knex('quotes').where({ merchant_id: m.merchantId, status: 'consumed' }).count<{ count: string }[]>('* as count');
  t.equal(Number(consumed[0]!.count), 7, 'only the successful payouts consumed their quotes');
});

t.test('refusals: quote of another flow or merchant, recipient mismatch, schema', async (t) => {
  const { m, customer } = await setup();
  await topUp(h, m, 'XOF', '10000');
  const payinQuote = await quote(h, m, 'payin', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'));
  t.equal((await payout(m, customer, payinQuote.id, '+221770000001')).body.error.code, 'quote_mismatch');
  t.equal((await payout(m, customer, randomUUID(), '+221770000001')).body.error.code, 'quote_not_found');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'));
  const wrong = await h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: customer, payment_reason_text: 'x', recipient: { ...recipient('+221770000001'), operator_code: 'SN_FREE_MOMO' },
  }, { idem: true });
  t.equal(wrong.body.error.code, 'quote_mismatch');
  const noType = await h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: customer, payment_reason_text: 'x', recipient: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000001' },
  }, { idem: true });
  t.equal(noType.body.error.code, 'bad_request', 'recipient_type is required');
  t.match(await wallet(h, m, 'XOF'), { available: '10000', reserved: '0' }, 'nothing held by refused requests');
  const list = await h.as(m, 'GET', '/payouts?status=pending');
  t.same(list.body.data, []);
});

t.test('GET /operators is unchanged', async (t) => {
  const m = await h.newMerchant();
  const ops = await h.as(m, 'GET', '/operators');
  t.equal(ops.status, 200);
  t.equal(ops.body.data.length, 13);
  t.match(ops.body.data.find((o: any) => o.operator_code === 'CI_ORANGE_MOMO'), {
    country_code: 'CI', currency: 'XOF', rail_type: 'mobile_money', flows: ['payin', 'payout'], min_amount: '100', max_amount: '1000000',
    requires_otp: true, availability: { payin: 'operational', payout: 'operational' },
  });
});
