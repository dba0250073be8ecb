// Quotes over HTTP: pricing, refusals with each contract code, transfer quotes, expiry (ManualClock).
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { ManualClock } from '../infra/clock.ts';
import { leg, newCustomer, quote } from './helpers/money.ts';
import { streams } from '../commands/streams.ts';
import { Aggregates } from '../commands/aggregates.ts';
import { merchantDecider } from '../domain/merchant.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00Z'));
const h = await startTestApp({ clock, env: { QUOTE_TTL_SECONDS: '900' } });
t.teardown(() => h.stop());

t.test('payin and payout quotes: 201, fees out of the amount, wallet impact, idempotent replay', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m);
  const body = { customer_id: customer, ...leg('CM_MTN_MOMO', 'CM', 'XAF', '5000') };
  const q = await h.as(m, 'POST', '/quotes/payin', body, { idem: 'quote-1' });
  t.equal(q.status, 201);
  t.match(q.body, {
    id: String, customer_id: customer, flow_type: 'payin', status: 'active', send_amount: '5000', send_currency: 'XAF',
    receive_amount: '4925', receive_currency: 'XAF', total_fee: '75', country_code: 'CM', operator_code: 'CM_MTN_MOMO',
    rail_type: 'mobile_money', expires_at: '2026-06-01T10:15:00.000Z', created_at: '2026-06-01T10:00:00.000Z',
    wallet_impact: { effects: [{ currency: 'XAF', when: 'completed', available_delta: '4925', reserved_delta: '0' }] },
  });
  const again = await h.as(m, 'POST', '/quotes/payin', body, { idem: 'quote-1' });
  t.equal(again.status, 201);
  t.equal(again.body.id, q.body.id, 'the same quote');
  t.same(again.body._meta, { idempotency_key: 'quote-1', idempotency_replayed: true });

  const po = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000.00'));
  t.match(po, { flow_type: 'payout', customer_id: null, send_amount: '10000', receive_amount: '9900', total_fee: '100', recipient_operator_code: 'SN_WAVE_MOMO' });
  t.same(po.wallet_impact.effects.map((e: any) => [e.when, e.available_delta, e.reserved_delta]), [
    ['created', '-10000', '10000'], ['completed', '0', '-10000'], ['failed', '10000', '-10000'],
  ]);

  const got = await h.as(m, 'GET', `/quotes/${q.body.id}`);
  t.equal(got.status, 200);
  t.equal(got.body.total_fee, '75');
  const other = await h.newMerchant('Other');
  t.equal((await h.as(other, 'GET', `/quotes/${q.body.id}`)).status, 404, "another merchant's quote is not found");
});

t.test('merchant pricing applies, with fixed part and rounding up', async (t) => {
  const m = await h.newMerchant();
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/pricing`, { payin: { percent: '2.25', fixed: '50' } });
  const q = await quote(h, m, 'payin', leg('CI_MTN_MOMO', 'CI', 'XOF', '1000'));
  t.match(q, { total_fee: '73', receive_amount: '927', pricing: { percent: '2.25', fixed: '50', percent_fee: '23', fixed_fee: '50' } });
});

t.test('refusals, each with its code', async (t) => {
  const m = await h.newMerchant();
  const code = async (path: string, body: unknown) => {
    const r = await h.as(m, 'POST', path, body, { idem: true });
    t.equal(r.status, 400, `${JSON.stringify(body)} → 400`);
    return r.body.error;
  };
  t.equal((await code('/quotes/payin', leg('SN_WAVE_MOMO', 'CM', 'XAF', '5000'))).code, 'unsupported_route', 'operator of another country');
  t.equal((await code('/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XOF', '5000'))).code, 'unsupported_route', 'currency of another country');
  t.equal((await code('/quotes/payin', { ...leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'), rail_type: 'bank_transfer' })).code, 'unsupported_route', 'rail');
  t.equal((await code('/quotes/payin', leg('CM_NOPE_MOMO', 'CM', 'XAF', '5000'))).code, 'unsupported_route', 'unknown operator');
  t.equal((await code('/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '99'))).code, 'amount_out_of_range');
  t.equal((await code('/quotes/payout', leg('CM_MTN_MOMO', 'CM', 'XAF', '1000001'))).code, 'amount_out_of_range');
  const frac = await code('/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000.50'));
  t.equal(frac.code, 'bad_request');
  t.same(frac.details.map((d: any) => d.field), ['send_amount'], 'the field is named');
  const num = await code('/quotes/payin', { ...leg('CM_MTN_MOMO', 'CM', 'XAF', '1'), send_amount: 5000 });
  t.equal(num.code, 'bad_request', 'a JSON number is refused');
  t.ok(num.details.some((d: any) => d.field === 'send_amount'));
  t.equal((await code('/quotes/payin', { ...leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'), send_currency: 'EUR' })).code, 'bad_request');

  await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { payin_operators: ['CM_ORANGE_MOMO'], payout_operators: [] });
  t.equal((await code('/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'))).code, 'operator_not_enabled');
  t.equal((await code('/quotes/payout', leg('CM_ORANGE_MOMO', 'CM', 'XAF', '5000'))).code, 'operator_not_enabled');

  const other = await h.newMerchant('Other');
  const theirs = await newCustomer(h, other);
  const unknown = await code('/quotes/payin', { customer_id: '00000000-0000-4000-8000-000000000000', ...leg('CM_ORANGE_MOMO', 'CM', 'XAF', '5000') });
  const foreign = await code('/quotes/payin', { customer_id: theirs, ...leg('CM_ORANGE_MOMO', 'CM', 'XAF', '5000') });
  t.equal(unknown.code, 'customer_not_found');
  t.same({ ...foreign, request_id: undefined }, { ...unknown, request_id: undefined }, "another merchant's customer: the identical answer");
});

t.test('transfer quotes: corridor routing, payin_amount or a fixed payout_amount', async (t) => {
  const m = await h.newMerchant();
  const base = { payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF' };
  const none = await h.as(m, 'POST', '/quotes/transfer', { ...base, payin_amount: '10000' }, { idem: true });
  t.equal(none.status, 400);
  t.equal(none.body.error.code, 'corridor_not_configured');
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'] });
  const q = await h.as(m, 'POST', '/quotes/transfer', { ...base, payin_amount: '10000', corridor_code: 'CM-SN-XAF-XOF' }, { idem: true });
  t.equal(q.status, 201);
  t.match(q.body, {
    flow_type: 'transfer', corridor_code: 'CM-SN-XAF-XOF', corridor_type: 'cross_border', payer_operator_code: 'CM_MTN_MOMO',
    recipient_operator_code: 'SN_WAVE_MOMO', payin_amount: '10000', payout_amount: '9800', send_amount: '10000', receive_amount: '9800',
    send_currency: 'XAF', receive_currency: 'XOF', total_fee: '200', fx_rate: '1',
  });
  const fixed = await h.as(m, 'POST', '/quotes/transfer', { ...base, payout_amount: '9801' }, { idem: true });
  t.equal(fixed.status, 201);
  t.match(fixed.body, { payout_amount: '9801', payin_amount: '10002', total_fee: '201', pricing: { fixed_side: 'receive' } }, 'the smallest payin leaving 9801');
  const mismatch = await h.as(m, 'POST', '/quotes/transfer', { ...base, payin_amount: '10000', corridor_code: 'CM-CI-XAF-XOF' }, { idem: true });
  t.equal(mismatch.body.error.code, 'unsupported_route', 'a corridor_code that does not match the operators');
  const both = await h.as(m, 'POST', '/quotes/transfer', { ...base, payin_amount: '10000', payout_amount: '9800' }, { idem: true });
  t.equal(both.body.error.code, 'bad_request');
  const wrongCur = await h.as(m, 'POST', '/quotes/transfer', { ...base, payin_currency: 'XOF', payin_amount: '10000' }, { idem: true });
  t.equal(wrongCur.body.error.code, 'unsupported_route');
});

t.test('expiry: GET shows expired once past expires_at; a payment refuses it', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m);
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const q2 = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '6000'));
  clock.advance(899_000);
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'still active a second before');
  clock.advance(1_000);
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'expired');
  const expiredList = await h.as(m, 'GET', '/quotes?status=expired');
  t.same(expiredList.body.data.map((x: any) => x.id).sort(), [q.id, q2.id].sort());
  t.same((await h.as(m, 'GET', '/quotes?status=active')).body.data, []);
  const p = await h.as(m, 'POST', '/payins', {
    quote_id: q.id, customer_id: customer, source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' },
  }, { idem: true });
  t.equal(p.status, 400);
  t.equal(p.body.error.code, 'quote_expired');
});

t.test('list quotes: newest first, cursor pages, filters', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(1000);
    ids.push((await quote(h, m, 'payin', { ...leg('CM_MTN_MOMO', 'CM', 'XAF', String(1000 + i)), ...(i % 2 === 0 ? { customer_id: customer } : {}) })).id);
  }
  const p1 = await h.as(m, 'GET', '/quotes?limit=2');
  t.equal(p1.status, 200);
  t.same(p1.body.data.map((x: any) => x.id), [ids[4], ids[3]]);
  t.equal(p1.body.has_more, true);
  const p2 = await h.as(m, 'GET', `/quotes?limit=2&cursor=${p1.body.next_cursor}`);
  t.same(p2.body.data.map((x: any) => x.id), [ids[2], ids[1]]);
  const byCustomer = await h.as(m, 'GET', `/quotes?customer_id=${customer}`);
  t.same(byCustomer.body.data.map((x: any) => x.id), [ids[4], ids[2], ids[0]]);
  t.equal((await h.as(m, 'GET', '/quotes?status=bogus')).status, 400);
});

t.test('a quote is priced on the merchant as it is when the quote commits, without reading its stream each time', async (t) => {
  const s = h.app.services;
  const m = await h.newMerchant('Priced elsewhere');
  const stream = streams.merchant(m.merchantId);
  const reads: string[] = [];
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
    if (/from events where stream_id/i.test(q.sql) && (q.bindings ?? []).includes(stream)) reads.push(q.sql);
  };
  t.match(await quote(h, m, 'payin', leg('CI_MTN_MOMO', 'CI', 'XOF', '1000')), { total_fee: '15' }, 'the default pricing');
  s.knex.on('query', onQuery);
  t.teardown(() => s.knex.off('query', onQuery));
  t.match(await quote(h, m, 'payin', leg('CI_MTN_MOMO', 'CI', 'XOF', '1000')), { total_fee: '15' });
  t.same(reads, [], 'the merchant came from the cache, held unchanged by the append');
  // Another process changes the pricing: this one's cache does not see it.
  const { state } = await new Aggregates(s.store).load(stream, merchantDecider);
  await s.store.append([{ streamId: stream, expectedVersion: 'any', events: [{ type: 'merchant.pricing_set', data: {
    pricing: { ...state.pricing, payin: { percent: '2.25', fixed: '50' } }, at: clock.now().toISOString() } }] }]);
  reads.length = 0;
  t.match(await quote(h, m, 'payin', leg('CI_MTN_MOMO', 'CI', 'XOF', '1000')), { total_fee: '73', receive_amount: '927' }, 'the new pricing');
  t.equal(reads.length, 1, 'read once: the cached merchant had moved');
});
