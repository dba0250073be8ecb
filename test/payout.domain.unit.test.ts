// The payout aggregate: created → pending → completed | failed, once; the create rules (the
// recipient matches the quote, the KYC gate); and its rendering.
import t from 'tap';
import * as P from '../domain/payout.ts';
import type { QuoteCreated } from '../domain/quote-pricing.ts';
import { fold } from '../domain/decider.ts';
import { InvariantViolation } from '../domain/errors.ts';
import { sandboxFailure } from '../domain/failure-reasons.ts';
import type { LegOutcome } from '../domain/payment.ts';
import { renderPayout } from '../projections/views/payout.ts';
import { deciderSpec } from './helpers/spec.ts';

const at = '2026-06-01T10:00:00.000Z';
const later = '2026-06-01T10:00:05.000Z';
const created: P.PayoutCreated = {
  payout_id: 'po-1', merchant_id: 'm-1', customer_id: 'c-1', quote_id: 'q-1',
  send_amount: '5000', send_currency: 'XOF', receive_amount: '4950', receive_currency: 'XOF', total_fee: '50',
  country_code: 'SN', operator_code: 'SN_WAVE_MOMO', rail_type: 'mobile_money',
  recipient: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000001', recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' },
  payment_reason_text: 'Salary', hold_id: 'po-1',
  pricing: { percent: '1', fixed: '0', percent_fee: '50', fixed_fee: '0', total_fee: '50', fee_currency: 'XOF', fx_rate: '1', fixed_side: 'send' },
  wallet_impact: { effects: [
    { currency: 'XOF', when: 'created', available_delta: '-5000', reserved_delta: '5000', description: 'hold' },
    { currency: 'XOF', when: 'completed', available_delta: '0', reserved_delta: '-5000', description: 'debit' },
    { currency: 'XOF', when: 'failed', available_delta: '5000', reserved_delta: '-5000', description: 'release' },
  ] },
  metadata: {}, at,
};
/** The payout quote `created` is made from, as it is when the payout consumes it. */
const quote: QuoteCreated = {
  quote_id: 'q-1', merchant_id: 'm-1', customer_id: null, flow_type: 'payout',
  send_amount: '5000', send_currency: 'XOF', receive_amount: '4950', receive_currency: 'XOF', total_fee: '50',
  country_code: 'SN', operator_code: 'SN_WAVE_MOMO', rail_type: 'mobile_money', corridor_code: null, corridor_type: null,
  payer_operator_code: null, recipient_operator_code: 'SN_WAVE_MOMO', payin_amount: null, payin_currency: null, payout_amount: null, payout_currency: null,
  pricing: created.pricing, wallet_impact: created.wallet_impact, expires_at: '2026-06-01T10:15:00.000Z', at,
};
const noKyc = { requiredOperators: [], customerStatus: null };
const create = (patch: Partial<P.CreatePayout> = {}): P.PayoutCommand => ({
  type: 'CreatePayout',
  data: {
    payoutId: 'po-1', merchantId: 'm-1', customerId: 'c-1', quote, recipient: created.recipient, paymentReasonText: 'Salary', metadata: {},
    kyc: noKyc, availability: {}, at, ...patch,
  },
});
const settle = (outcome: LegOutcome): P.PayoutCommand => ({ type: 'Settle', data: { ...outcome, at: later } });

const given = (events: P.PayoutEvent[]) => deciderSpec(P.payoutDecider).given(events);
const createdE: P.PayoutEvent = { type: 'payout.created', data: created };
const pendingE: P.PayoutEvent = { type: 'payout.pending', data: { reason: 'awaiting the provider', at } };
const completedE: P.PayoutEvent = { type: 'payout.completed', data: { provider_reference: 'SBX-9', at: later } };
const notFound = { provider: 'sandbox', code: 'RECIPIENT_NOT_FOUND', message: "No mobile-money account for the recipient's phone" };
const failedE: P.PayoutEvent = {
  type: 'payout.failed',
  data: { reason: 'RECIPIENT_NOT_FOUND', failure_reason: 'account_not_found', provider_failure: notFound, provider_reference: 'SBX-9', at: later },
};
/** As recorded before failures were (CONTRACT §15): the provider's code alone. */
const failedBeforeE: P.PayoutEvent = { type: 'payout.failed', data: { reason: 'RECIPIENT_NOT_FOUND', provider_reference: 'SBX-9', at: later } };

t.test('create, submission, outcome: each once', async (t) => {
  given([]).when(create()).then(t, [createdE, pendingE]);
  given([createdE, pendingE]).when(create()).then(t, [], 'retried create');
  given([createdE, pendingE]).when({ type: 'RecordSubmission', data: { providerReference: 'SBX-9', at } }).then(t, [{ type: 'payout.submitted', data: { provider_reference: 'SBX-9', at } }]);
  given([createdE, pendingE]).when(settle({ outcome: 'completed', providerReference: 'SBX-9' })).then(t, [completedE]);
  given([createdE, pendingE]).when(settle({ outcome: 'failed', providerReference: 'SBX-9', reason: 'RECIPIENT_NOT_FOUND', failure: sandboxFailure('RECIPIENT_NOT_FOUND') }))
    .then(t, [failedE]);
  given([createdE, pendingE]).when(settle({
    outcome: 'failed', providerReference: 'SBX-9', reason: 'AMOUNT_OUT_OF_BOUNDS',
    failure: { failure_reason: 'limit_reached', provider_failure: { provider: 'pawapay', code: 'AMOUNT_OUT_OF_BOUNDS', message: 'Amount out of bounds' } },
  })).thenMatch(t, [{ data: { failure_reason: 'limit_reached', provider_failure: { provider: 'pawapay', code: 'AMOUNT_OUT_OF_BOUNDS' } } }], "pawaPay's failure as told");
  given([createdE, pendingE, failedBeforeE]).when(settle({ outcome: 'completed', providerReference: null })).then(t, [], 'final, recorded before');
  given([createdE, pendingE, completedE]).when(settle({ outcome: 'failed', providerReference: null, reason: 'X' })).then(t, [], 'final');
  given([createdE, pendingE, failedE]).when(settle({ outcome: 'completed', providerReference: null })).then(t, [], 'final');
  given([createdE, pendingE]).when(create({ merchantId: 'm-2' })).thenThrows(t, InvariantViolation, "another merchant's payout id");
  given([]).when(settle({ outcome: 'completed', providerReference: null })).thenThrows(t, InvariantViolation, 'no outcome for a payout that does not exist');
});

t.test('create: the recipient must match the quote (party check)', async (t) => {
  const recipient = created.recipient;
  const mismatch = given([]).when(create({ recipient: { ...recipient, operator_code: 'SN_ORANGE_MOMO' } })).thenThrows(t, 'quote_mismatch', 'another operator');
  t.same(mismatch?.details?.map((d) => d.field), ['recipient.operator_code']);
  given([]).when(create({ recipient: { ...recipient, rail_type: 'bank_transfer' } })).thenThrows(t, 'quote_mismatch', 'another rail');
  const { phone: _, ...noPhone } = recipient;
  const incomplete = given([]).when(create({ recipient: noPhone })).thenThrows(t, 'bad_request', 'no phone');
  t.same(incomplete?.details?.map((d) => d.field), ['recipient.phone']);
  given([]).when(create({ recipient: { ...recipient, phone: '+237670000001' } })).thenThrows(t, 'bad_request', 'a phone of another country');
});

t.test("create: an operator on the routing's KYC list needs the customer's KYC verified", async (t) => {
  const gate = { requiredOperators: ['SN_WAVE_MOMO'] };
  const refused = given([]).when(create({ kyc: { ...gate, customerStatus: 'pending' } })).thenThrows(t, 'kyc_required');
  t.same(refused?.details?.map((d) => d.field), ['customer_id']);
  given([]).when(create({ kyc: { ...gate, customerStatus: 'verified' } })).then(t, [createdE, pendingE], 'verified: created');
  given([]).when(create({ kyc: { requiredOperators: ['SN_ORANGE_MOMO'], customerStatus: null } })).then(t, [createdE, pendingE], 'another operator: no gate');
  given([]).when(create({ recipient: { ...created.recipient, operator_code: 'SN_ORANGE_MOMO' }, kyc: { ...gate, customerStatus: 'not_started' } }))
    .thenThrows(t, 'quote_mismatch', 'the party is checked before the KYC gate');
});

t.test('rendering: recipient, reason text, wallet impact by status', async (t) => {
  const pending = renderPayout(fold(P.payoutDecider, [createdE, pendingE]));
  t.match(pending, {
    id: 'po-1', status: 'pending', recipient: created.recipient, payment_reason_text: 'Salary', provider_reference: null,
    wallet_impact: { effects: [{ when: 'created', applied: true }, { when: 'completed', applied: false }, { when: 'failed', applied: false }] },
  });
  t.match(pending, { failure_reason: null, provider_failure: null });
  const failed = renderPayout(fold(P.payoutDecider, [createdE, pendingE, failedE]));
  t.match(failed, {
    status: 'failed', failure_reason: 'account_not_found', provider_failure: notFound, failed_at: later, provider_reference: 'SBX-9',
    history: [{ status: 'created' }, { status: 'pending' }, { status: 'failed', reason: 'account_not_found' }],
    wallet_impact: { effects: [{ applied: true }, { applied: false }, { applied: true }] },
  });
  t.same(renderPayout(fold(P.payoutDecider, [createdE, pendingE, failedBeforeE])), failed, 'a failure recorded before renders the same');
});
