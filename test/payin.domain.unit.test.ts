// The payin aggregate: created → pending → completed | failed, once; the create rules (the source
// matches the quote, an OTP where the operator requires one); and its rendering.
import t from 'tap';
import * as P from '../domain/payin.ts';
import type { QuoteCreated } from '../domain/quote-pricing.ts';
import { fold } from '../domain/decider.ts';
import { sandboxFailure, type Failure } from '../domain/failure-reasons.ts';
import { InvariantViolation } from '../domain/errors.ts';
import { renderPayin } from '../projections/views/payin.ts';
import { deciderSpec } from './helpers/spec.ts';

const at = '2026-06-01T10:00:00.000Z';
const later = '2026-06-01T10:00:05.000Z';
const created: P.PayinCreated = {
  payin_id: 'p-1', merchant_id: 'm-1', customer_id: 'c-1', quote_id: 'q-1',
  send_amount: '5000', send_currency: 'XAF', receive_amount: '4925', receive_currency: 'XAF', total_fee: '75',
  country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money',
  source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' },
  pricing: { percent: '1.5', fixed: '0', percent_fee: '75', fixed_fee: '0', total_fee: '75', fee_currency: 'XAF', fx_rate: '1', fixed_side: 'send' },
  wallet_impact: { effects: [{ currency: 'XAF', when: 'completed', available_delta: '4925', reserved_delta: '0', description: 'credit' }] },
  metadata: { order: '42' }, otp_required: false, otp_supplied: false, at,
};
/** The payin quote `created` is made from, as it is when the payin consumes it. */
const quote: QuoteCreated = {
  quote_id: 'q-1', merchant_id: 'm-1', customer_id: 'c-1', flow_type: 'payin',
  send_amount: '5000', send_currency: 'XAF', receive_amount: '4925', receive_currency: 'XAF', total_fee: '75',
  country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', corridor_code: null, corridor_type: null,
  payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: null, payin_amount: null, payin_currency: null, payout_amount: null, payout_currency: null,
  pricing: created.pricing, wallet_impact: created.wallet_impact, expires_at: '2026-06-01T10:15:00.000Z', at,
};
const create = (patch: Partial<P.CreatePayin> = {}): P.PayinCommand => ({
  type: 'CreatePayin',
  data: { payinId: 'p-1', merchantId: 'm-1', customerId: 'c-1', quote, source: created.source, otpSupplied: false, metadata: { order: '42' }, availability: {}, at, ...patch },
});
const submission = (providerReference: string): P.PayinCommand => ({ type: 'RecordSubmission', data: { providerReference, at } });
const completed = (providerReference: string | null): P.PayinCommand => ({ type: 'Settle', data: { outcome: 'completed', providerReference, at: later } });
const failed = (providerReference: string | null, reason: string, failure?: Failure): P.PayinCommand =>
  ({ type: 'Settle', data: { outcome: 'failed', providerReference, reason, ...(failure ? { failure } : {}), at: later } });

const given = (events: P.PayinEvent[]) => deciderSpec(P.payinDecider).given(events);
const createdE: P.PayinEvent = { type: 'payin.created', data: created };
const pendingE: P.PayinEvent = { type: 'payin.pending', data: { reason: 'awaiting the provider', at } };
const submittedE: P.PayinEvent = { type: 'payin.submitted', data: { provider_reference: 'SBX-1', at } };
const completedE: P.PayinEvent = { type: 'payin.completed', data: { provider_reference: 'SBX-1', at: later } };
const insufficient = { provider: 'sandbox', code: 'INSUFFICIENT_FUNDS', message: "The payer's balance is too low for this amount" };
const failedE: P.PayinEvent = {
  type: 'payin.failed',
  data: { reason: 'INSUFFICIENT_FUNDS', failure_reason: 'insufficient_funds', provider_failure: insufficient, provider_reference: 'SBX-1', at: later },
};
/** As recorded before failures were (CONTRACT §15): the provider's code alone. */
const failedBeforeE: P.PayinEvent = { type: 'payin.failed', data: { reason: 'INSUFFICIENT_FUNDS', provider_reference: 'SBX-1', at: later } };

t.test('create: created then pending in one decision; a retried create decides nothing', async (t) => {
  given([]).when(create()).then(t, [createdE, pendingE]);
  given([createdE, pendingE]).when(create()).then(t, []);
  t.match(given([createdE, pendingE]).state, { status: 'pending', history: [{ status: 'created' }, { status: 'pending' }] });
  given([createdE, pendingE]).when(create({ source: { ...created.source, operator_code: 'CM_ORANGE_MOMO' } }))
    .thenNothing(t, 'a retried create is not decided again');
  given([createdE, pendingE]).when(create({ merchantId: 'm-2' })).thenThrows(t, InvariantViolation, "another merchant's payin id");
});

t.test('create: the source must match the quote (party check)', async (t) => {
  const source = created.source;
  const mismatch = given([]).when(create({ source: { ...source, operator_code: 'CM_ORANGE_MOMO' } })).thenThrows(t, 'quote_mismatch', 'another operator');
  t.same(mismatch?.details?.map((d) => d.field), ['source.operator_code']);
  given([]).when(create({ source: { ...source, country_code: 'SN' } })).thenThrows(t, 'quote_mismatch', 'another country');
  const incomplete = given([]).when(create({ source: { country_code: 'CM', rail_type: 'mobile_money' } })).thenThrows(t, 'bad_request', 'no phone, no operator');
  t.same(incomplete?.details?.map((d) => d.field), ['source.phone', 'source.operator_code']);
  given([]).when(create({ source: { ...source, phone: '+221770000001' } })).thenThrows(t, 'bad_request', 'a phone of another country');
  given([]).when(create({ source: { ...source, phone: '670000001' } }))
    .thenMatch(t, [{ data: { source: { phone: '+237670000001' } } }], 'a national number is kept in E.164');
});

t.test('create: an operator that collects with a one-time password needs one', async (t) => {
  const otpQuote: QuoteCreated = {
    ...quote, send_currency: 'XOF', receive_currency: 'XOF', country_code: 'SN', operator_code: 'SN_ORANGE_MOMO', payer_operator_code: 'SN_ORANGE_MOMO',
  };
  const source = { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_ORANGE_MOMO', phone: '+221770000001' };
  const refused = given([]).when(create({ quote: otpQuote, source })).thenThrows(t, 'otp_required');
  t.same(refused?.details?.map((d) => d.field), ['otp']);
  given([]).when(create({ quote: otpQuote, source, otpSupplied: true }))
    .thenMatch(t, [{ data: { operator_code: 'SN_ORANGE_MOMO', otp_required: true, otp_supplied: true } }, { type: 'payin.pending' }]);
  given([]).when(create({ otpSupplied: true }))
    .thenMatch(t, [{ data: { otp_required: false, otp_supplied: true } }], 'an OTP where none is required still goes to the provider');
});

t.test('submission is recorded once', async (t) => {
  given([createdE, pendingE]).when(submission('SBX-1')).then(t, [submittedE]);
  given([createdE, pendingE, submittedE]).when(submission('SBX-1')).then(t, []);
  given([]).when(submission('SBX-1')).thenThrows(t, InvariantViolation, 'no submission for a payin that does not exist');
});

t.test('the outcome settles it once; replays and late outcomes change nothing', async (t) => {
  const base = [createdE, pendingE, submittedE];
  given(base).when(completed('SBX-1')).then(t, [completedE]);
  given(base).when(failed('SBX-1', 'INSUFFICIENT_FUNDS', sandboxFailure('INSUFFICIENT_FUNDS'))).then(t, [failedE]);
  given([...base, completedE]).when(completed('SBX-1')).then(t, [], 'replayed');
  given([...base, completedE]).when(failed('SBX-1', 'X')).then(t, [], 'contradicting late outcome');
  given([...base, failedE]).when(completed('SBX-1')).then(t, [], 'failed is final');
  given([]).when(completed('SBX-1')).thenThrows(t, InvariantViolation, 'no outcome for a payin that does not exist');
  const failedState = given([...base, failedE]).state;
  t.match(failedState, { status: 'failed', failure_reason: 'insufficient_funds', provider_failure: insufficient, failed_at: later, completed_at: null });
  t.same(failedState.history.map((h) => [h.status, h.reason]), [['created', null], ['pending', 'awaiting the provider'], ['failed', 'insufficient_funds']]);
});

t.test('a failure: as the provider told it, else read from its code (CONTRACT §15)', async (t) => {
  const base = [createdE, pendingE, submittedE];
  const mtn: Failure = {
    failure_reason: 'payer_declined', provider_failure: { provider: 'mtn_momo', code: 'APPROVAL_REJECTED', message: 'The payer rejected the request' },
  };
  given(base).when(failed('SBX-1', 'APPROVAL_REJECTED', mtn)).then(t, [{
    type: 'payin.failed', data: { reason: 'APPROVAL_REJECTED', ...mtn, provider_reference: 'SBX-1', at: later },
  }], "the provider's failure is recorded as told");
  given(base).when(failed('SBX-1', 'INSUFFICIENT_FUNDS')).then(t, [failedE], 'a sandbox code without the failure: the sandbox named');
  given(base).when(failed(null, 'SOMETHING_ELSE')).then(t, [{
    type: 'payin.failed', data: { reason: 'SOMETHING_ELSE', failure_reason: 'provider_error', provider_failure: null, provider_reference: null, at: later },
  }], 'an unknown code without the failure: provider_error, no provider named');
  t.match(given([...base, { type: 'payin.failed', data: { reason: 'APPROVAL_REJECTED', ...mtn, provider_reference: 'SBX-1', at: later } }]).state,
    { failure_reason: 'payer_declined', provider_failure: mtn.provider_failure }, 'folded as recorded');
});

t.test('a failure recorded before failures were still folds, read from its code', async (t) => {
  const base = [createdE, pendingE, submittedE];
  const before = given([...base, failedBeforeE]).state;
  t.match(before, { status: 'failed', failure_reason: 'insufficient_funds', provider_failure: insufficient, failed_at: later });
  t.same(before.history.at(-1), { status: 'failed', reason: 'insufficient_funds', created_at: later });
  t.same(before, given([...base, failedE]).state, 'the same state as the event recorded now');
  const otp = given([...base, { type: 'payin.failed', data: { reason: 'INVALID_OTP', provider_reference: null, at: later } }]).state;
  t.match(otp, { failure_reason: 'payer_declined', provider_failure: { provider: 'sandbox', code: 'INVALID_OTP' } });
  const unknown = given([...base, { type: 'payin.failed', data: { reason: 'COLLECTION_FAILED', provider_reference: null, at: later } }]).state;
  t.match(unknown, { failure_reason: 'provider_error', provider_failure: null }, 'not a sandbox code: no provider named');
  given([...base, failedBeforeE]).when(completed('SBX-1')).thenNothing(t, 'still final');
});

t.test('rendering: the API JSON, wallet impact applied once completed, never an OTP', async (t) => {
  const pending = renderPayin(fold(P.payinDecider, [createdE, pendingE, submittedE]));
  t.match(pending, {
    id: 'p-1', merchant_id: 'm-1', customer_id: 'c-1', quote_id: 'q-1', status: 'pending', provider_reference: 'SBX-1',
    send_amount: '5000', receive_amount: '4925', metadata: { order: '42' }, source: created.source, completed_at: null,
    wallet_impact: { effects: [{ when: 'completed', applied: false }] },
  });
  const done = renderPayin(fold(P.payinDecider, [createdE, pendingE, submittedE, completedE]));
  t.match(done, { status: 'completed', completed_at: later, updated_at: later, wallet_impact: { effects: [{ applied: true }] } });
  t.notOk(JSON.stringify(done).includes('otp'), 'nothing about an OTP in the rendering');
  t.match(done, { failure_reason: null, provider_failure: null });
  const failedView = renderPayin(fold(P.payinDecider, [createdE, pendingE, submittedE, failedBeforeE]));
  t.match(failedView, { status: 'failed', failure_reason: 'insufficient_funds', provider_failure: insufficient, failed_at: later });
});
