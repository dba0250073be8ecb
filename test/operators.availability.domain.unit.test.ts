// Operator availability, pure (CONTRACT §14): the operator aggregate records each change once with
// who and when, refuses what is not a change it can make; quotes decide with the availability they
// are given (closed: operator_unavailable naming the field; delayed: said on the quote), per flow and,
// for a transfer, per leg.
import t from 'tap';
import * as A from '../domain/operator-availability.ts';
import * as Q from '../domain/quote.ts';
import type { QuoteRequest } from '../domain/quote-pricing.ts';
import { DEFAULT_PRICING, DEFAULT_ROUTING } from '../domain/merchant.ts';
import { deciderSpec } from './helpers/spec.ts';

const at = '2026-06-01T10:00:00.000Z';
const who: A.ChangedBy = { actor: 'operator', credential: 'admin-token:0123456789ab', request_id: 'r-1' };
const given = (events: A.OperatorAvailabilityEvent[]) => deciderSpec(A.operatorAvailabilityDecider).given(events);
const set = (patch: Partial<A.SetAvailability>): A.OperatorAvailabilityCommand =>
  ({ type: 'SetAvailability', data: { operatorCode: 'SN_WAVE_MOMO', changedBy: who, at, ...patch } });
const changed = (changes: A.AvailabilityChange[]): A.OperatorAvailabilityEvent =>
  ({ type: 'operator.availability_changed', data: { operator_code: 'SN_WAVE_MOMO', changes, changed_by: who, at } });

t.test('the operator aggregate: operational by default, each change once with who and when', async (t) => {
  t.match(given([]).state, { payin: 'operational', payout: 'operational', updatedAt: null, updatedBy: null });
  given([]).when(set({ payout: 'closed' })).then(t, [changed([{ flow: 'payout', from: 'operational', to: 'closed' }])]);
  const closed = [changed([{ flow: 'payout', from: 'operational', to: 'closed' }])];
  t.match(given(closed).state, { payin: 'operational', payout: 'closed', updatedAt: at, updatedBy: who });
  given(closed).when(set({ payout: 'closed' })).thenNothing(t, 'what is in force already: nothing recorded');
  given(closed).when(set({ payin: 'delayed', payout: 'closed' })).then(t, [changed([{ flow: 'payin', from: 'operational', to: 'delayed' }])], 'only the flows that change');
  given(closed).when(set({ payin: 'delayed', payout: 'operational' }))
    .then(t, [changed([{ flow: 'payin', from: 'operational', to: 'delayed' }, { flow: 'payout', from: 'closed', to: 'operational' }])]);
});

t.test('the operator aggregate refuses an unknown operator, no flow, an unknown value', async (t) => {
  given([]).when(set({ operatorCode: 'XX_NOPE', payin: 'closed' })).thenThrows(t, 'not_found');
  given([]).when(set({})).thenThrows(t, 'bad_request');
  given([]).when(set({ payin: 'down' as A.Availability })).thenThrows(t, 'bad_request');
});

t.test('requireAvailable: closed refuses naming the field, delayed is said, unknown operators are operational', async (t) => {
  const av: A.OperatorAvailabilities = { SN_WAVE_MOMO: { payin: 'delayed', payout: 'closed' } };
  t.equal(A.requireAvailable(av, [{ operatorCode: 'SN_WAVE_MOMO', flow: 'payin', field: 'f' }]), 'delayed');
  t.equal(A.requireAvailable(av, [{ operatorCode: 'CM_MTN_MOMO', flow: 'payout', field: 'f' }]), 'operational', 'left out: operational');
  t.throws(() => A.requireAvailable(av, [{ operatorCode: 'CM_MTN_MOMO', flow: 'payin', field: 'a' }, { operatorCode: 'SN_WAVE_MOMO', flow: 'payout', field: 'b' }]),
    { code: 'operator_unavailable', details: [{ field: 'b', message: 'SN_WAVE_MOMO is closed for payouts' }] });
});

const common = {
  quoteId: 'q-1', merchantId: 'm-1', customerId: null as string | null, routing: { ...DEFAULT_ROUTING, corridors: ['CM-SN-XAF-XOF'] },
  pricing: DEFAULT_PRICING, at, expiresAt: '2026-06-01T10:15:00.000Z',
};
const quote = (availability: A.OperatorAvailabilities, request: QuoteRequest): Q.QuoteCommand => ({ type: 'CreateQuote', data: { ...common, availability, ...request } });
const payoutLeg: QuoteRequest = { flow: 'payout', countryCode: 'SN', operatorCode: 'SN_WAVE_MOMO', railType: 'mobile_money', sendAmount: '5000', sendCurrency: 'XOF' };
const transfer: QuoteRequest = {
  flow: 'transfer', payerOperatorCode: 'CM_MTN_MOMO', recipientOperatorCode: 'SN_WAVE_MOMO', corridorCode: undefined,
  payinCurrency: 'XAF', payoutCurrency: 'XOF', payinAmount: '10000', payoutAmount: undefined,
};
const fresh = () => deciderSpec(Q.quoteDecider).given([]);

t.test('quotes: closed refused per flow, delayed said, operational otherwise', async (t) => {
  const wave = (payin: A.Availability, payout: A.Availability) => ({ SN_WAVE_MOMO: { payin, payout } });
  fresh().when(quote({}, payoutLeg)).thenMatch(t, [{ data: { operator_availability: 'operational' } }]);
  fresh().when(quote(wave('operational', 'delayed'), payoutLeg)).thenMatch(t, [{ data: { operator_availability: 'delayed' } }]);
  t.match(fresh().when(quote(wave('operational', 'closed'), payoutLeg)).thenThrows(t, 'operator_unavailable')?.details, [{ field: 'operator_code' }]);
  fresh().when(quote(wave('closed', 'operational'), payoutLeg)).thenMatch(t, [{ data: { operator_availability: 'operational' } }], 'closed for payins only');
  fresh().when(quote(wave('closed', 'operational'), { ...payoutLeg, flow: 'payin' })).thenThrows(t, 'operator_unavailable');
});

t.test('transfer quotes: the payer\'s operator for payins, the recipient\'s for payouts', async (t) => {
  const mtn = (payin: A.Availability, payout: A.Availability) => ({ CM_MTN_MOMO: { payin, payout } });
  t.match(fresh().when(quote(mtn('closed', 'operational'), transfer)).thenThrows(t, 'operator_unavailable')?.details, [{ field: 'payer_operator_code' }]);
  fresh().when(quote(mtn('operational', 'closed'), transfer)).thenMatch(t, [{ data: { operator_availability: 'operational' } }], 'payer closed for payouts: no matter');
  t.match(fresh().when(quote({ SN_WAVE_MOMO: { payin: 'operational', payout: 'closed' } }, transfer)).thenThrows(t, 'operator_unavailable')?.details,
    [{ field: 'recipient_operator_code' }]);
  fresh().when(quote({ SN_WAVE_MOMO: { payin: 'closed', payout: 'delayed' } }, transfer)).thenMatch(t, [{ data: { operator_availability: 'delayed' } }]);
});

t.test('the operator\'s routing (CONTRACT §15): the sandbox by default; 1 to 3 known providers, no repeats, each serving it', async (t) => {
  const serving = { sandbox: true, mtn_momo: false, pawapay: true };
  const route = (providers: unknown): A.OperatorAvailabilityCommand =>
    ({ type: 'SetRouting', data: { operatorCode: 'SN_WAVE_MOMO', providers, serving, changedBy: who, at } });
  const routed = (providers: string[], previous: string[]): A.OperatorAvailabilityEvent =>
    ({ type: 'operator.routing_set', data: { operator_code: 'SN_WAVE_MOMO', providers, previous, changed_by: who, at } });
  t.same(given([]).state.routing, ['sandbox']);
  given([]).when(route(['pawapay', 'sandbox'])).then(t, [routed(['pawapay', 'sandbox'], ['sandbox'])]);
  const routedOnce = [routed(['pawapay', 'sandbox'], ['sandbox'])];
  t.same(given(routedOnce).state.routing, ['pawapay', 'sandbox']);
  t.match(given(routedOnce).state, { payin: 'operational', updatedAt: null }, 'the availability untouched');
  given(routedOnce).when(route(['pawapay', 'sandbox'])).thenNothing(t, 'the routing in force: nothing recorded');
  given(routedOnce).when(route(['mtn_momo'])).thenThrows(t, 'provider_unavailable', 'not configured or not serving it');
  for (const bad of [[], ['nope'], ['sandbox', 'sandbox'], ['sandbox', 'pawapay', 'mtn_momo', 'sandbox'], 'sandbox', [42]]) {
    given(routedOnce).when(route(bad)).thenThrows(t, 'bad_request', JSON.stringify(bad));
  }
  given([]).when({ type: 'SetRouting', data: { operatorCode: 'XX_NOPE', providers: ['sandbox'], serving, changedBy: who, at } }).thenThrows(t, 'not_found');
  // The availability's decisions fold past a routing event.
  given(routedOnce).when(set({ payin: 'closed' })).then(t, [{ type: 'operator.availability_changed', data: { operator_code: 'SN_WAVE_MOMO', changes: [{ flow: 'payin', from: 'operational', to: 'closed' }], changed_by: who, at } }]);
});
