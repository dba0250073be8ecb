// The payout aggregate: created → pending → completed | failed, once; and its rendering.
import t from 'tap';
import * as P from '../domain/payout.ts';
import { fold } from '../domain/decider.ts';
import { renderPayout } from '../projections/views/payout.ts';
import { spec } from './helpers/spec.ts';

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
const given = (events: P.PayoutEvent[]) => spec(P.payoutDecider).given(events);
const createdE: P.PayoutEvent = { type: 'payout.created', data: created };
const pendingE: P.PayoutEvent = { type: 'payout.pending', data: { reason: 'awaiting the provider', at } };
const completedE: P.PayoutEvent = { type: 'payout.completed', data: { provider_reference: 'SBX-9', at: later } };
const failedE: P.PayoutEvent = { type: 'payout.failed', data: { reason: 'RECIPIENT_NOT_FOUND', provider_reference: 'SBX-9', at: later } };

t.test('create, submission, outcome: each once', async (t) => {
  given([]).when((s) => P.createPayout(s, created)).then(t, [createdE, pendingE]);
  given([createdE, pendingE]).when((s) => P.createPayout(s, created)).then(t, [], 'retried create');
  given([createdE, pendingE]).when((s) => P.recordSubmission(s, { providerReference: 'SBX-9', at })).then(t, [{ type: 'payout.submitted', data: { provider_reference: 'SBX-9', at } }]);
  given([createdE, pendingE]).when((s) => P.settle(s, { outcome: 'completed', providerReference: 'SBX-9', at: later })).then(t, [completedE]);
  given([createdE, pendingE]).when((s) => P.settle(s, { outcome: 'failed', providerReference: 'SBX-9', reason: 'RECIPIENT_NOT_FOUND', at: later })).then(t, [failedE]);
  given([createdE, pendingE, completedE]).when((s) => P.settle(s, { outcome: 'failed', providerReference: null, reason: 'X', at: later })).then(t, [], 'final');
  given([createdE, pendingE, failedE]).when((s) => P.settle(s, { outcome: 'completed', providerReference: null, at: later })).then(t, [], 'final');
});

t.test('rendering: recipient, reason text, wallet impact by status', async (t) => {
  const pending = renderPayout(fold(P.payoutDecider, [createdE, pendingE]));
  t.match(pending, {
    id: 'po-1', status: 'pending', recipient: created.recipient, payment_reason_text: 'Salary', provider_reference: null,
    wallet_impact: { effects: [{ when: 'created', applied: true }, { when: 'completed', applied: false }, { when: 'failed', applied: false }] },
  });
  const failed = renderPayout(fold(P.payoutDecider, [createdE, pendingE, failedE]));
  t.match(failed, {
    status: 'failed', failure_reason: 'RECIPIENT_NOT_FOUND', failed_at: later, provider_reference: 'SBX-9',
    history: [{ status: 'created' }, { status: 'pending' }, { status: 'failed', reason: 'RECIPIENT_NOT_FOUND' }],
    wallet_impact: { effects: [{ applied: true }, { applied: false }, { applied: true }] },
  });
});
