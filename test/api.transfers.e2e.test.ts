// Two-leg transfers through HTTP (issue 4): every transition, both failure paths, relaunch (allowed,
// refused, idempotent), OTP paths, wallet effects, lists, and webhook event order.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { waitUntil } from './helpers/wait.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => h.stop());

/** Answers `fn()` once `ok` holds of it (the bound is a safety net: test/helpers/wait.ts). */
const until = async <T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
  let last: T | undefined;
  await waitUntil(what, async () => {
    last = await fn();
    return ok(last);
  });
  return last!;
};

async function setup(corridors = ['CM-SN-XAF-XOF', 'SN-SN-XOF-XOF'], topUp = '100000'): Promise<MerchantCreds & { customerId: string }> {
  const m = await h.newMerchant('Transfers');
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors });
  if (topUp !== '0') {
    const tu = await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: topUp });
    if (tu.status !== 201) throw new Error(`top-up ${tu.status} ${tu.text}`);
  }
  const c = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: true });
  return { ...m, customerId: c.body.id };
}

const payerCM = (phone = '+237670000001') => ({ country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone });
const recipientSN = (phone = '+221770000001') => ({ country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye' });

async function quote(m: MerchantCreds, body: Record<string, unknown> = {}) {
  const q = await h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000', ...body,
  }, { idem: true });
  if (q.status !== 201) throw new Error(`quote ${q.status} ${q.text}`);
  return q.body;
}

async function transfer(m: MerchantCreds & { customerId: string }, opts: { payer?: object; recipient?: object; quoteBody?: Record<string, unknown>; extra?: Record<string, unknown> } = {}) {
  const q = await quote(m, opts.quoteBody);
  return h.as(m, 'POST', '/transfers', {
    quote_id: q.id, customer_id: m.customerId, payer: opts.payer ?? payerCM(), recipient: opts.recipient ?? recipientSN(), ...opts.extra,
  }, { idem: true });
}

const get = (m: MerchantCreds, id: string) => h.as(m, 'GET', `/transfers/${id}`);
const settled = (m: MerchantCreds, id: string) => until(`transfer ${id} terminal`, () => get(m, id), (r) => ['completed', 'failed'].includes(r.body.status));
const wallets = async (m: MerchantCreds) => Object.fromEntries((await h.as(m, 'GET', '/wallets')).body.data.map((w: any) => [w.currency, w]));

t.test('happy path: pending → collecting → disbursing → completed, with wallet effects', async (t) => {
  const m = await setup();
  const q = await quote(m);
  t.match(q, { payin_amount: '10000', total_fee: '200', payout_amount: '9800' });
  const created = await h.as(m, 'POST', '/transfers', {
    quote_id: q.id, customer_id: m.customerId, payer: payerCM('670000001'), recipient: recipientSN(),
    payment_reason_code: 'FAMILY', sender_source_of_funds: 'salary', sender_occupation: 'teacher', metadata: { order: 'A-1' },
  }, { idem: true });
  t.equal(created.status, 201);
  t.match(created.body, {
    status: 'pending', payin_status: 'not_started', payout_status: 'not_started', payin_amount: '10000', payout_amount: '9800',
    send_amount: '10000', receive_amount: '9800', corridor_code: 'CM-SN-XAF-XOF', payment_reason_code: 'FAMILY',
    sender_source_of_funds: 'salary', sender_occupation: 'teacher', metadata: { order: 'A-1' },
  });
  t.equal(created.body.payer.phone, '+237670000001', 'payer phone normalised to E.164');
  t.equal((await get(m, created.body.id)).status, 200, 'readable right after create');
  let w = await wallets(m);
  t.equal(w.XOF.available, '90200', 'payout amount held from available at create');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'consumed');

  const done = await settled(m, created.body.id);
  t.match(done.body, { status: 'completed', payin_status: 'completed', payout_status: 'completed' });
  t.same(done.body.history.map((x: any) => x.status), ['pending', 'collecting', 'disbursing', 'completed']);
  t.ok(done.body.collection_reference && done.body.disbursement_reference, 'provider references kept');
  t.ok(done.body.collection_completed_at && done.body.disbursement_completed_at);
  t.equal(done.body.execution.disbursements.length, 1);
  t.match(done.body.execution.collection, { status: 'completed', amount: '10000', currency: 'XAF' });
  w = await wallets(m);
  t.match(w.XOF, { available: '90200', reserved: '0' }, 'reservation debited');
  t.match(w.XAF, { available: '9800', reserved: '0' }, 'payin amount minus fee credited in the payin currency');

  const events = await until('the transfer\'s three events', () => h.as(m, 'GET', `/events?limit=100`), (r) => r.body.data?.filter((e: any) => e.data?.id === created.body.id).length >= 3)
    .catch(async (err) => { t.comment(JSON.stringify((await h.as(m, 'GET', '/events?limit=100')).body).slice(0, 3000)); throw err; });
  const names = events.body.data.filter((e: any) => e.data.id === created.body.id).map((e: any) => e.event).reverse();
  t.same(names, ['transfer.payin.completed', 'transfer.payout.completed', 'transfer.completed'], 'each event once, in order');
});

t.test('collection fails: failed, payout never started, reservation released', async (t) => {
  const m = await setup();
  const r = await transfer(m, { payer: payerCM('+237670000099') });
  t.equal(r.status, 201);
  const done = await settled(m, r.body.id);
  t.match(done.body, { status: 'failed', payin_status: 'failed', payout_status: 'not_started' });
  t.equal(done.body.execution.disbursements.length, 0, 'no disbursement attempt');
  t.ok(done.body.execution.collection.failure_reason);
  t.same(done.body.history.map((x: any) => x.status), ['pending', 'collecting', 'failed']);
  const w = await wallets(m);
  t.match(w.XOF, { available: '100000', reserved: '0' });
  const relaunch = await h.as(m, 'POST', `/transfers/${r.body.id}/relaunch-payout`, {}, { idem: true });
  t.equal(relaunch.status, 400);
  t.equal(relaunch.body.error.code, 'relaunch_not_allowed', 'no relaunch after a collection failure');
});

t.test('disbursement fails, then relaunch with a new recipient completes without a second collection', async (t) => {
  const m = await setup();
  const r = await transfer(m, { recipient: recipientSN('+221770000099') });
  const failed = await settled(m, r.body.id);
  t.match(failed.body, { status: 'failed', payin_status: 'completed', payout_status: 'failed' });
  t.ok(failed.body.disbursement_failed_at);
  let w = await wallets(m);
  t.match(w.XOF, { available: '100000', reserved: '0' }, 'hold released');
  t.match(w.XAF, { available: '9800' }, 'collection credited');

  const key = `relaunch-${r.body.id}`;
  const relaunch = await h.as(m, 'POST', `/transfers/${r.body.id}/relaunch-payout`, { recipient: recipientSN('+221770000002') }, { idem: key });
  t.equal(relaunch.status, 200);
  t.match(relaunch.body, { status: 'disbursing', payin_status: 'completed', payout_status: 'pending' });
  t.equal(relaunch.body.recipient.phone, '+221770000002');
  const replay = await h.as(m, 'POST', `/transfers/${r.body.id}/relaunch-payout`, { recipient: recipientSN('+221770000002') }, { idem: key });
  t.equal(replay.status, 200);
  t.equal(replay.body._meta.idempotency_replayed, true, 'idempotent under its key');
  w = await wallets(m);
  t.equal(w.XOF.available, '90200', 'reservation taken again from available');
  const done = await settled(m, r.body.id);
  t.match(done.body, { status: 'completed', payout_status: 'completed' });
  t.equal(done.body.execution.disbursements.length, 2);
  t.same(done.body.history.map((x: any) => x.status), ['pending', 'collecting', 'disbursing', 'failed', 'disbursing', 'completed']);
  const legs = await h.app.services.knex('provider_legs').where('reference', 'like', `transfer:${r.body.id}:%`).select('reference', 'kind');
  t.equal(legs.filter((l: any) => l.kind === 'collection').length, 1, 'exactly one collection');
  t.equal(legs.filter((l: any) => l.kind === 'disbursement').length, 2, 'two disbursement attempts');
  w = await wallets(m);
  t.match(w.XOF, { available: '90200', reserved: '0' });
  t.match(w.XAF, { available: '9800' }, 'the payer was not collected again');
});

t.test('relaunch: other states refused, amount override, insufficient balance, other merchant', async (t) => {
  const m = await setup(undefined, '40000');
  const pending = await transfer(m, { recipient: recipientSN('+221770000098') });
  t.equal(pending.status, 201, pending.text);
  await until('the transfer disbursing', () => get(m, pending.body.id), (r) => r.body.status === 'disbursing');
  const refused = await h.as(m, 'POST', `/transfers/${pending.body.id}/relaunch-payout`, {}, { idem: true });
  t.equal(refused.body.error.code, 'relaunch_not_allowed', 'refused while disbursing');
  const done = await transfer(m);
  await settled(m, done.body.id);
  t.equal((await h.as(m, 'POST', `/transfers/${done.body.id}/relaunch-payout`, {}, { idem: true })).body.error.code, 'relaunch_not_allowed', 'refused when completed');

  const failing = await transfer(m, { recipient: recipientSN('+221770000099') });
  await settled(m, failing.body.id);
  const tooMuch = await h.as(m, 'POST', `/transfers/${failing.body.id}/relaunch-payout`, { payout_amount: '500000' }, { idem: true });
  t.equal(tooMuch.status, 400);
  t.equal(tooMuch.body.error.code, 'insufficient_balance');
  const fractional = await h.as(m, 'POST', `/transfers/${failing.body.id}/relaunch-payout`, { payout_amount: '100.5' }, { idem: true });
  t.equal(fractional.body.error.code, 'bad_request');
  const other = await setup();
  const foreign = await h.as(other, 'POST', `/transfers/${failing.body.id}/relaunch-payout`, {}, { idem: true });
  t.equal(foreign.status, 404, "another merchant's transfer is not found");
  t.equal((await get(other, failing.body.id)).status, 404);
  const smaller = await h.as(m, 'POST', `/transfers/${failing.body.id}/relaunch-payout`, { payout_amount: '5000', recipient: recipientSN('+221770000003') }, { idem: true });
  t.equal(smaller.status, 200);
  t.equal(smaller.body.payout_amount, '5000');
  const fin = await settled(m, failing.body.id);
  t.equal(fin.body.status, 'completed');
  t.equal(fin.body.execution.disbursements[1].amount, '5000');
});

t.test('create refusals: balance, quote, parties, OTP; a refusal never consumes the quote', async (t) => {
  const poor = await setup(undefined, '0');
  const q = await quote(poor);
  const short = await h.as(poor, 'POST', '/transfers', { quote_id: q.id, customer_id: poor.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(short.status, 400);
  t.equal(short.body.error.code, 'insufficient_balance');
  t.equal((await h.as(poor, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'quote still active');

  const m = await setup();
  const q2 = await quote(m);
  const wrongPayer = await h.as(m, 'POST', '/transfers', { quote_id: q2.id, customer_id: m.customerId, payer: { ...payerCM(), operator_code: 'CM_ORANGE_MOMO' }, recipient: recipientSN() }, { idem: true });
  t.equal(wrongPayer.body.error.code, 'quote_mismatch');
  const wrongRecipient = await h.as(m, 'POST', '/transfers', { quote_id: q2.id, customer_id: m.customerId, payer: payerCM(), recipient: { ...recipientSN(), country_code: 'CI' } }, { idem: true });
  t.equal(wrongRecipient.body.error.code, 'quote_mismatch');
  const payinQuote = await h.as(m, 'POST', '/quotes/payin', { country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', send_amount: '5000', send_currency: 'XAF' }, { idem: true });
  const wrongFlow = await h.as(m, 'POST', '/transfers', { quote_id: payinQuote.body.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(wrongFlow.body.error.code, 'quote_mismatch');
  const unknownQuote = await h.as(m, 'POST', '/transfers', { quote_id: '00000000-0000-4000-8000-000000000000', customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(unknownQuote.body.error.code, 'quote_not_found');
  const unknownCustomer = await h.as(m, 'POST', '/transfers', { quote_id: q2.id, customer_id: '00000000-0000-4000-8000-000000000000', payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(unknownCustomer.body.error.code, 'customer_not_found');
  const badPhone = await h.as(m, 'POST', '/transfers', { quote_id: q2.id, customer_id: m.customerId, payer: payerCM('+22177'), recipient: recipientSN() }, { idem: true });
  t.equal(badPhone.status, 400);
  t.equal((await h.as(m, 'GET', `/quotes/${q2.id}`)).body.status, 'active', 'quote still active after every refusal');
  const ok = await h.as(m, 'POST', '/transfers', { quote_id: q2.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(ok.status, 201);
  const again = await h.as(m, 'POST', '/transfers', { quote_id: q2.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(again.body.error.code, 'quote_not_active', 'one transfer per quote');
});

t.test('OTP: required for SN_ORANGE_MOMO payers, 000000 fails the collection, never returned or stored', async (t) => {
  const m = await setup();
  const senegalPayer = { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_ORANGE_MOMO', phone: '+221770000005' };
  const qb = { payer_operator_code: 'SN_ORANGE_MOMO', payin_currency: 'XOF' };
  const missing = await transfer(m, { payer: senegalPayer, quoteBody: qb });
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'otp_required');
  const bad = await transfer(m, { payer: senegalPayer, quoteBody: qb, extra: { otp: '000000' } });
  t.equal(bad.status, 201);
  t.notOk('otp' in bad.body, 'the OTP is not returned');
  const failed = await settled(m, bad.body.id);
  t.match(failed.body, { status: 'failed', payin_status: 'failed', payout_status: 'not_started' });
  t.match(failed.body.execution.collection, { failure_reason: 'payer_declined', provider_failure: { provider: 'sandbox', code: 'INVALID_OTP' } });
  const good = await transfer(m, { payer: senegalPayer, quoteBody: qb, extra: { otp: '482913' } });
  t.equal(good.status, 201);
  t.notOk(good.text.includes('482913'), 'the OTP is not returned');
  t.equal((await settled(m, good.body.id)).body.status, 'completed');
  const leaks = await h.app.services.knex.raw(`SELECT count(*)::int AS n FROM events WHERE data::text LIKE '%482913%' OR metadata::text LIKE '%482913%'`);
  t.equal(leaks.rows[0].n, 0, 'the OTP is in no event');
  const vault = await h.app.services.knex.raw(`SELECT count(*)::int AS n FROM otp_vault WHERE sealed LIKE '%482913%'`);
  t.equal(vault.rows[0].n, 0, 'never in clear in the vault');
});

t.test('lists and filters', async (t) => {
  const m = await setup();
  const a = await transfer(m);
  const b = await transfer(m, { payer: payerCM('+237670000099') });
  await settled(m, a.body.id);
  await settled(m, b.body.id);
  const all = await h.as(m, 'GET', '/transfers?limit=1');
  t.equal(all.status, 200);
  t.equal(all.body.data.length, 1);
  t.equal(all.body.has_more, true);
  t.equal(all.body.data[0].id, b.body.id, 'newest first');
  const next = await h.as(m, 'GET', `/transfers?limit=1&cursor=${encodeURIComponent(all.body.next_cursor)}`);
  t.equal(next.body.data[0].id, a.body.id);
  const failed = await h.as(m, 'GET', '/transfers?status=failed');
  t.same(failed.body.data.map((x: any) => x.id), [b.body.id]);
  const payinFailed = await h.as(m, 'GET', '/transfers?payin_status=failed');
  t.same(payinFailed.body.data.map((x: any) => x.id), [b.body.id]);
  t.equal((await h.as(m, 'GET', '/transfers?status=weird')).status, 400);
  const other = await setup();
  t.same((await h.as(other, 'GET', '/transfers')).body.data, [], "another merchant's list is empty");
});
