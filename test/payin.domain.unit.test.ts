// The payin aggregate: created → pending → completed | failed, once; and its rendering.
import t from 'tap';
import * as P from '../domain/payin.ts';
import { fold } from '../domain/decider.ts';
import { renderPayin } from '../projections/views/payin.ts';
import { spec } from './helpers/spec.ts';

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
const given = (events: P.PayinEvent[]) => spec(P.payinDecider).given(events);
const createdE: P.PayinEvent = { type: 'payin.created', data: created };
const pendingE: P.PayinEvent = { type: 'payin.pending', data: { reason: 'awaiting the provider', at } };
const submittedE: P.PayinEvent = { type: 'payin.submitted', data: { provider_reference: 'SBX-1', at } };
const completedE: P.PayinEvent = { type: 'payin.completed', data: { provider_reference: 'SBX-1', at: later } };
const failedE: P.PayinEvent = { type: 'payin.failed', data: { reason: 'INSUFFICIENT_FUNDS', provider_reference: 'SBX-1', at: later } };

t.test('create: created then pending in one decision; a retried create decides nothing', async (t) => {
  given([]).when((s) => P.createPayin(s, created)).then(t, [createdE, pendingE]);
  given([createdE, pendingE]).when((s) => P.createPayin(s, created)).then(t, []);
  t.match(given([createdE, pendingE]).state, { status: 'pending', history: [{ status: 'created' }, { status: 'pending' }] });
});

t.test('submission is recorded once', async (t) => {
  given([createdE, pendingE]).when((s) => P.recordSubmission(s, { providerReference: 'SBX-1', at })).then(t, [submittedE]);
  given([createdE, pendingE, submittedE]).when((s) => P.recordSubmission(s, { providerReference: 'SBX-1', at })).then(t, []);
});

t.test('the outcome settles it once; replays and late outcomes change nothing', async (t) => {
  const base = [createdE, pendingE, submittedE];
  given(base).when((s) => P.settle(s, { outcome: 'completed', providerReference: 'SBX-1', at: later })).then(t, [completedE]);
  given(base).when((s) => P.settle(s, { outcome: 'failed', providerReference: 'SBX-1', reason: 'INSUFFICIENT_FUNDS', at: later })).then(t, [failedE]);
  given([...base, completedE]).when((s) => P.settle(s, { outcome: 'completed', providerReference: 'SBX-1', at: later })).then(t, [], 'replayed');
  given([...base, completedE]).when((s) => P.settle(s, { outcome: 'failed', providerReference: 'SBX-1', reason: 'X', at: later })).then(t, [], 'contradicting late outcome');
  given([...base, failedE]).when((s) => P.settle(s, { outcome: 'completed', providerReference: 'SBX-1', at: later })).then(t, [], 'failed is final');
  const failed = given([...base, failedE]).state;
  t.match(failed, { status: 'failed', failure_reason: 'INSUFFICIENT_FUNDS', failed_at: later, completed_at: null });
  t.same(failed.history.map((h) => [h.status, h.reason]), [['created', null], ['pending', 'awaiting the provider'], ['failed', 'INSUFFICIENT_FUNDS']]);
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
});
