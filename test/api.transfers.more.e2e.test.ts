// Transfers, what test/api.transfers.e2e.test.ts leaves out: concurrent relaunches over HTTP, the content
// of `execution`, `pricing`, `total_fee` and `wallet_impact` (also after a relaunch with another
// amount: docs/MONEY.md "Transfers"), the list filters customer_id, payout_status, created_from and
// created_to, and the OTP edge cases (CI_ORANGE_MOMO, malformed OTPs).
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import {
  createTransfer, getTransfer, newCustomerOf, payerCM, postTransfer, recipientSN, sandboxLegs, settledTransfer,
  transferMerchant, transferQuote, waitFor, walletsOf,
} from './helpers/transfers.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => h.stop());

const ms = (iso: string) => Date.parse(iso);

/** Sum of the applied effects' deltas per currency: what the transfer has done to the wallets. */
function appliedDeltas(impact: { effects: Array<{ currency: string; available_delta: string; reserved_delta: string; applied: boolean }> }) {
  const out: Record<string, { available: bigint; reserved: bigint }> = {};
  for (const e of impact.effects) {
    if (!e.applied) continue;
    const c = (out[e.currency] ??= { available: 0n, reserved: 0n });
    c.available += BigInt(e.available_delta);
    c.reserved += BigInt(e.reserved_delta);
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { available: v.available.toString(), reserved: v.reserved.toString() }]));
}

t.test('concurrent relaunches with different Idempotency-Keys: one wins, one reservation, one new disbursement leg', async (t) => {
  const m = await transferMerchant(h);
  const created = await createTransfer(h, m, { recipient: recipientSN('+221770000099') });
  await settledTransfer(h, m, created.id, 'failed');
  t.match((await walletsOf(h, m)).XOF, { available: '100000', reserved: '0' });

  const N = 8;
  // The new recipient's leg stays pending at the provider, so the reservation stays visible.
  const answers = await Promise.all(Array.from({ length: N }, (_, i) => h.as(m, 'POST', `/transfers/${created.id}/relaunch-payout`,
    { recipient: recipientSN('+221770000098') }, { idem: `race-${i}-${created.id}` })));
  const won = answers.filter((a) => a.status === 200);
  const lost = answers.filter((a) => a.status !== 200);
  t.equal(won.length, 1, 'exactly one relaunch succeeds');
  t.equal(lost.length, N - 1);
  for (const a of lost) {
    t.equal(a.status, 400);
    t.equal(a.body.error.code, 'relaunch_not_allowed');
  }
  t.match(won[0]!.body, { status: 'disbursing', payout_status: 'pending', execution: { disbursements: [{ attempt: 1 }, { attempt: 2 }] } });
  t.match((await walletsOf(h, m)).XOF, { available: '90200', reserved: '9800' }, 'one reservation of one payout amount');

  const legs = await waitFor('the relaunched leg at the provider', async () => {
    const l = await sandboxLegs(h, created.id);
    return l.some((x) => x.reference === `transfer:${created.id}:payout:2`) && l;
  });
  t.same(legs.map((l) => [l.reference, l.kind]), [
    [`transfer:${created.id}:collection`, 'collection'],
    [`transfer:${created.id}:payout:1`, 'disbursement'],
    [`transfer:${created.id}:payout:2`, 'disbursement'],
  ], 'one new disbursement leg, no second collection');
  const events = await h.app.services.store.readStream(`transfer-${created.id}`);
  t.equal(events.filter((e) => e.type === 'transfer.payout.started').length, 2, 'two attempts in the event store');
  const current = (await getTransfer(h, m, created.id)).body;
  t.equal(current.execution.disbursements.length, 2);
  t.match((await walletsOf(h, m)).XOF, { available: '90200', reserved: '9800' }, 'still one reservation');
  t.comment(`races: ${N} concurrent relaunches: ${won.length} succeeded, ${lost.length} relaunch_not_allowed, new attempts=${events.filter((e) => e.type === 'transfer.payout.started').length - 1}`);
});

t.test('execution, pricing, total_fee and wallet_impact of a completed transfer', async (t) => {
  const m = await transferMerchant(h);
  const created = await createTransfer(h, m);
  t.match(created.execution, { collection: { leg_reference: null, status: 'not_started', provider_reference: null, started_at: null }, disbursements: [] },
    'nothing executed at create');
  const done = await settledTransfer(h, m, created.id, 'completed');
  const legs = await sandboxLegs(h, created.id);
  const { collection, disbursements } = done.execution;
  t.same(collection, {
    leg_reference: `transfer:${created.id}:collection`, status: 'completed', provider_reference: legs[0]!.provider_reference,
    operator_code: 'CM_MTN_MOMO', amount: '10000', currency: 'XAF',
    started_at: collection.started_at, completed_at: collection.completed_at, failed_at: null, failure_reason: null, provider_failure: null,
  });
  t.match(legs[0], { kind: 'collection', amount: '10000' }, 'the provider collected payin_amount');
  t.equal(disbursements.length, 1);
  t.same(disbursements[0], {
    attempt: 1, leg_reference: `transfer:${created.id}:payout:1`, status: 'completed', provider_reference: legs[1]!.provider_reference,
    operator_code: 'SN_WAVE_MOMO', amount: '9800', currency: 'XOF',
    started_at: disbursements[0].started_at, completed_at: disbursements[0].completed_at, failed_at: null, failure_reason: null, provider_failure: null,
  });
  t.match(legs[1], { kind: 'disbursement', amount: '9800' }, 'the provider disbursed payout_amount');
  // Timestamps: one after the other, and the flat snapshot fields agree with execution and history.
  const order = [done.created_at, collection.started_at, collection.completed_at, disbursements[0].started_at, disbursements[0].completed_at];
  t.ok(order.every((x: string) => !Number.isNaN(ms(x))), 'every timestamp is set');
  t.same([...order].sort((a, b) => ms(a) - ms(b)), order, 'created → collection started → completed → disbursement started → completed');
  t.equal(done.collection_reference, collection.provider_reference);
  t.equal(done.collection_completed_at, collection.completed_at);
  t.equal(done.disbursement_reference, disbursements[0].provider_reference);
  t.equal(done.disbursement_completed_at, disbursements[0].completed_at);
  t.equal(done.disbursement_failed_at, null);
  t.equal(done.completed_at, disbursements[0].completed_at);
  t.same(done.history.map((x: any) => [x.status, x.created_at]), [
    ['pending', done.created_at], ['collecting', collection.started_at], ['disbursing', collection.completed_at], ['completed', disbursements[0].completed_at],
  ]);

  t.equal(done.total_fee, '200');
  t.same(done.pricing, {
    percent: '2', fixed: '0', percent_fee: '200', fixed_fee: '0', total_fee: '200', fee_currency: 'XAF', fx_rate: '1', fixed_side: 'send',
    fee_charged_on: 'collection', quoted_payout_amount: '9800', payout_amount: '9800', payout_adjustment: '0',
  });
  t.match(done.wallet_impact.effects, [
    { when: 'created', currency: 'XOF', available_delta: '-9800', reserved_delta: '9800', applied: true },
    { when: 'collection_completed', currency: 'XAF', available_delta: '9800', reserved_delta: '0', applied: true },
    { when: 'collection_failed', applied: false },
    { when: 'disbursement_completed', attempt: 1, currency: 'XOF', available_delta: '0', reserved_delta: '-9800', applied: true },
    { when: 'disbursement_failed', attempt: 1, applied: false },
  ]);
  t.same(appliedDeltas(done.wallet_impact), { XOF: { available: '-9800', reserved: '0' }, XAF: { available: '9800', reserved: '0' } });
  t.same(appliedDeltas(done.wallet_impact), {
    XOF: { available: String(BigInt((await walletsOf(h, m)).XOF!.available) - 100000n), reserved: '0' },
    XAF: { available: (await walletsOf(h, m)).XAF!.available, reserved: '0' },
  }, 'the applied effects are what happened to the wallets');
});

t.test('a relaunch with another payout_amount: the fee stays the quote\'s, pricing states the adjustment, execution each attempt', async (t) => {
  const m = await transferMerchant(h);
  const q = await transferQuote(h, m, { payout_amount: '9800', payin_amount: undefined });
  t.match(q, { payin_amount: '10000', payout_amount: '9800', total_fee: '200', pricing: { fixed_side: 'receive' } });
  const r = await h.as(m, 'POST', '/transfers', { quote_id: q.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN('+221770000099') }, { idem: true });
  t.equal(r.status, 201, r.text);
  const failed = await settledTransfer(h, m, r.body.id, 'failed');
  const legs = await sandboxLegs(h, r.body.id);
  t.match(failed.execution.disbursements, [{
    attempt: 1, leg_reference: `transfer:${r.body.id}:payout:1`, status: 'failed', provider_reference: legs[1]!.provider_reference,
    amount: '9800', completed_at: null, failed_at: String, failure_reason: 'account_not_found', provider_failure: { provider: 'sandbox', code: 'RECIPIENT_NOT_FOUND' },
  }]);
  t.equal(failed.disbursement_failed_at, failed.execution.disbursements[0].failed_at);
  t.equal(failed.failure_reason, 'account_not_found');
  t.match(failed.wallet_impact.effects.filter((e: any) => e.applied).map((e: any) => e.when),
    ['created', 'collection_completed', 'disbursement_failed'], 'the hold was released');

  const relaunch = await h.as(m, 'POST', `/transfers/${r.body.id}/relaunch-payout`, { payout_amount: '5000', recipient: recipientSN('+221770000006') }, { idem: true });
  t.equal(relaunch.status, 200, relaunch.text);
  t.match(relaunch.body, { status: 'disbursing', payout_status: 'pending', payin_amount: '10000', send_amount: '10000', payout_amount: '5000', receive_amount: '5000', total_fee: '200' });
  t.match(relaunch.body.execution.disbursements[1], {
    attempt: 2, leg_reference: `transfer:${r.body.id}:payout:2`, status: 'pending', amount: '5000', currency: 'XOF',
    started_at: String, completed_at: null, failed_at: null,
  });
  const done = await settledTransfer(h, m, r.body.id, 'completed');
  t.equal(done.total_fee, '200', 'the fee charged on the collection does not change');
  t.same(done.pricing, {
    percent: '2', fixed: '0', percent_fee: '200', fixed_fee: '0', total_fee: '200', fee_currency: 'XAF', fx_rate: '1', fixed_side: 'receive',
    fee_charged_on: 'collection', quoted_payout_amount: '9800', payout_amount: '5000', payout_adjustment: '-4800',
  });
  t.equal(BigInt(done.receive_amount), BigInt(done.send_amount) - BigInt(done.total_fee) + BigInt(done.pricing.payout_adjustment),
    'receive_amount = send_amount − total_fee + payout_adjustment');
  const legs2 = await sandboxLegs(h, r.body.id);
  t.match(legs2, [{ kind: 'collection', amount: '10000' }, { kind: 'disbursement', amount: '9800', state: 'failed' }, { kind: 'disbursement', amount: '5000', state: 'completed' }]);
  t.match(done.execution.disbursements, [
    { attempt: 1, amount: '9800', status: 'failed', provider_reference: legs2[1]!.provider_reference },
    { attempt: 2, amount: '5000', status: 'completed', provider_reference: legs2[2]!.provider_reference, completed_at: String, failed_at: null, failure_reason: null },
  ]);
  t.equal(done.disbursement_reference, legs2[2]!.provider_reference);
  t.equal(done.disbursement_failed_at, null, 'the flat fields describe the current attempt');
  t.ok(ms(done.execution.disbursements[1].started_at) >= ms(done.execution.disbursements[0].failed_at), 'the relaunch started after the failure');
  t.match(done.history.map((x: any) => [x.status, x.reason]), [
    ['pending', null], ['collecting', null], ['disbursing', null], ['failed', 'account_not_found'], ['disbursing', 'payout relaunched'], ['completed', null],
  ]);
  t.match(done.wallet_impact.effects.slice(5), [
    { when: 'payout_relaunched', attempt: 2, currency: 'XOF', available_delta: '-5000', reserved_delta: '5000', applied: true },
    { when: 'disbursement_completed', attempt: 2, currency: 'XOF', available_delta: '0', reserved_delta: '-5000', applied: true },
    { when: 'disbursement_failed', attempt: 2, applied: false },
  ]);
  const w = await walletsOf(h, m);
  t.match(w.XOF, { available: '95000', reserved: '0' }, 'the relaunched amount was held and debited');
  t.match(w.XAF, { available: '9800', reserved: '0' }, 'payin_amount − total_fee credited once');
  t.same(appliedDeltas(done.wallet_impact), { XOF: { available: '-5000', reserved: '0' }, XAF: { available: '9800', reserved: '0' } },
    'the applied effects add up to what happened to the wallets');
});

t.test('list filters: customer_id, payout_status, created_from, created_to', async (t) => {
  const m = await transferMerchant(h);
  const other = await newCustomerOf(h, m);
  const a = await createTransfer(h, m);
  const b = await createTransfer(h, m, { customerId: other, recipient: recipientSN('+221770000098') });
  const c = await createTransfer(h, m, { payer: payerCM('+237670000099') });
  await settledTransfer(h, m, a.id, 'completed');
  await settledTransfer(h, m, c.id, 'failed');
  await waitFor('b disbursing', async () => (await getTransfer(h, m, b.id)).body.status === 'disbursing');
  const ids = async (q: string) => {
    const r = await h.as(m, 'GET', `/transfers${q}`);
    if (r.status !== 200) throw new Error(`${q}: ${r.status} ${r.text}`);
    return r.body.data.map((x: any) => x.id);
  };
  t.same(await ids(''), [c.id, b.id, a.id]);
  t.same(await ids(`?customer_id=${other}`), [b.id]);
  t.same(await ids(`?customer_id=${m.customerId}`), [c.id, a.id]);
  t.same(await ids('?payout_status=pending'), [b.id]);
  t.same(await ids('?payout_status=completed'), [a.id]);
  t.same(await ids('?payout_status=not_started'), [c.id]);
  t.same(await ids('?payout_status=failed'), []);
  t.same(await ids(`?customer_id=${m.customerId}&payout_status=completed`), [a.id], 'filters combine');
  const at = encodeURIComponent(b.created_at);
  t.same(await ids(`?created_from=${at}`), [c.id, b.id], 'created_from is inclusive');
  t.same(await ids(`?created_to=${at}`), [b.id, a.id], 'created_to is inclusive');
  t.same(await ids(`?created_from=${at}&created_to=${at}`), [b.id]);
  t.same(await ids(`?created_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
  const page = await h.as(m, 'GET', `/transfers?customer_id=${m.customerId}&limit=1`);
  t.same(page.body.data.map((x: any) => x.id), [c.id]);
  t.same(await ids(`?customer_id=${m.customerId}&limit=1&cursor=${page.body.next_cursor}`), [a.id], 'filters apply with the cursor');
  const bad: Array<[string, string]> = [
    ['?payout_status=sent', 'query.payout_status'],
    ['?customer_id=not-a-uuid', 'query.customer_id'],
    ['?created_from=yesterday', 'query.created_from'],
    ['?created_to=2026-13-45', 'query.created_to'],
  ];
  for (const [q, field] of bad) {
    const r = await h.as(m, 'GET', `/transfers${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.body.error.code, 'bad_request');
    t.ok(r.body.error.details.some((d: any) => d.field === field), `${q} names ${field}`);
  }
});

t.test('OTP: CI_ORANGE_MOMO payers need one; a malformed OTP is 400 bad_request; none consumes the quote', async (t) => {
  const m = await transferMerchant(h, { corridors: ['CI-SN-XOF-XOF', 'CM-CI-XAF-XOF'] });
  const payerCI = { country_code: 'CI', rail_type: 'mobile_money', operator_code: 'CI_ORANGE_MOMO', phone: '+2250701020304' };
  const q = await transferQuote(h, m, { payer_operator_code: 'CI_ORANGE_MOMO', payin_currency: 'XOF' });
  const post = (otp: unknown) => h.as(m, 'POST', '/transfers', {
    quote_id: q.id, customer_id: m.customerId, payer: payerCI, recipient: recipientSN(), ...(otp === undefined ? {} : { otp }),
  }, { idem: true });
  const missing = await post(undefined);
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'otp_required');
  t.ok(missing.body.error.details.some((d: any) => d.field === 'otp'), 'names otp');
  for (const bad of ['abcd', '12a4', '123', '123456789', ' 1234', 1234]) {
    const r = await post(bad);
    t.equal(r.status, 400, `otp ${JSON.stringify(bad)}`);
    t.equal(r.body.error.code, 'bad_request');
    t.ok(r.body.error.details.some((d: any) => d.field === 'otp'), `otp ${JSON.stringify(bad)}: names otp`);
    if (String(bad).trim().length >= 4) t.notOk(r.text.includes(String(bad).trim()), 'the refused OTP is not echoed');
  }
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'no refusal consumed the quote');
  t.equal((await walletsOf(h, m)).XOF!.reserved, '0', 'no refusal held anything');
  const ok = await post('12345678');
  t.equal(ok.status, 201, ok.text);
  t.notOk(ok.text.includes('12345678'), 'the OTP is not returned');
  const done = await settledTransfer(h, m, ok.body.id, 'completed');
  t.equal(done.payin_status, 'completed', 'the 8-digit OTP collected');

  // The OTP is for collecting: a CI_ORANGE_MOMO recipient needs none.
  const toCI = await postTransfer(h, m, {
    quoteBody: { recipient_operator_code: 'CI_ORANGE_MOMO', payout_currency: 'XOF' },
    recipient: { ...recipientSN(), country_code: 'CI', operator_code: 'CI_ORANGE_MOMO', phone: '+2250701020305' },
  });
  t.equal(toCI.status, 201, toCI.text);
  t.equal((await settledTransfer(h, m, toCI.body.id)).status, 'completed');
});
