// Quotes: pricing, routing refusals, transfer corridors and fixed payouts, and using a quote once.
import t from 'tap';
import * as Q from '../domain/quote.ts';
import type { QuoteCreated, QuoteRequest } from '../domain/quote-pricing.ts';
import { DEFAULT_PRICING, DEFAULT_ROUTING } from '../domain/merchant.ts';
import { grossForNet, netOf } from '../domain/money.ts';
import { deciderSpec } from './helpers/spec.ts';

const at = '2026-06-01T10:00:00.000Z';
const expiresAt = '2026-06-01T10:15:00.000Z';
const merchantId = 'm-1';
const common = {
  quoteId: 'q-1', merchantId, customerId: null as string | null, routing: { ...DEFAULT_ROUTING, corridors: ['CM-SN-XAF-XOF', 'SN-SN-XOF-XOF'] },
  pricing: DEFAULT_PRICING, availability: {}, at, expiresAt,
};
const leg = { countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', railType: 'mobile_money', sendAmount: '5000', sendCurrency: 'XAF' };
const given = (events: Q.QuoteEvent[]) => deciderSpec(Q.quoteDecider).given(events);
const fresh = () => given([]);
/** Price a quote: the merchant's routing and pricing, ids and time in `common`, the request in `request`. */
const quote = (request: Partial<typeof common> & QuoteRequest): Q.QuoteCommand => ({ type: 'CreateQuote', data: { ...common, ...request } });

t.test('payin quote: fee out of the amount, receive = send − fee, wallet impact on completion', async (t) => {
  fresh().when(quote({ ...leg, flow: 'payin' })).thenMatch(t, [{
    type: 'quote.created',
    data: {
      flow_type: 'payin', send_amount: '5000', receive_amount: '4925', total_fee: '75', send_currency: 'XAF', receive_currency: 'XAF',
      country_code: 'CM', operator_code: 'CM_MTN_MOMO', payer_operator_code: 'CM_MTN_MOMO', corridor_code: null, expires_at: expiresAt,
      pricing: { percent: '1.5', fixed: '0', percent_fee: '75', total_fee: '75', fx_rate: '1' },
      wallet_impact: { effects: [{ currency: 'XAF', when: 'completed', available_delta: '4925', reserved_delta: '0' }] },
    },
  }]);
  fresh().when(quote({ ...leg, sendAmount: '5000.00', flow: 'payin' }))
    .thenMatch(t, [{ data: { send_amount: '5000' } }], '"5000.00" is 5000');
});

t.test('payout quote: hold at create, debit on completion, release on failure', async (t) => {
  fresh().when(quote({ ...leg, flow: 'payout' })).thenMatch(t, [{
    data: {
      flow_type: 'payout', send_amount: '5000', receive_amount: '4950', total_fee: '50', recipient_operator_code: 'CM_MTN_MOMO',
      wallet_impact: {
        effects: [
          { when: 'created', available_delta: '-5000', reserved_delta: '5000' },
          { when: 'completed', available_delta: '0', reserved_delta: '-5000' },
          { when: 'failed', available_delta: '5000', reserved_delta: '-5000' },
        ],
      },
    },
  }]);
});

t.test('refusals with the contract codes', async (t) => {
  const payin = (patch: Partial<typeof leg>, routing = common.routing) => fresh().when(quote({ routing, ...leg, ...patch, flow: 'payin' }));
  payin({ operatorCode: 'SN_WAVE_MOMO' }).thenThrows(t, 'unsupported_route', 'operator of another country');
  payin({ sendCurrency: 'XOF' }).thenThrows(t, 'unsupported_route', 'currency of another country');
  payin({ railType: 'bank_transfer' }).thenThrows(t, 'unsupported_route', 'no bank rail in the sandbox');
  payin({ operatorCode: 'CM_FAKE_MOMO' }).thenThrows(t, 'unsupported_route', 'unknown operator');
  payin({ countryCode: 'FR', sendCurrency: 'XAF' }).thenThrows(t, 'unsupported_route', 'uncovered country');
  payin({ operatorCode: undefined }).thenThrows(t, 'bad_request', 'mobile money needs an operator');
  payin({}, { ...common.routing, payin_operators: ['CM_ORANGE_MOMO'] }).thenThrows(t, 'operator_not_enabled');
  payin({ sendAmount: '99' }).thenThrows(t, 'amount_out_of_range');
  payin({ sendAmount: '1000001' }).thenThrows(t, 'amount_out_of_range');
  payin({ sendAmount: '5000.5' }).thenThrows(t, 'bad_request', 'a fractional franc');
  fresh().when(quote({ ...leg, flow: 'payout', pricing: { ...DEFAULT_PRICING, payout: { percent: '0', fixed: '200' } }, sendAmount: '150' }))
    .thenThrows(t, 'amount_out_of_range', 'an amount that does not cover the fee');
});

const transfer = { flow: 'transfer' as const, payerOperatorCode: 'CM_MTN_MOMO', recipientOperatorCode: 'SN_WAVE_MOMO', corridorCode: undefined, payinCurrency: 'XAF', payoutCurrency: 'XOF', payinAmount: '10000', payoutAmount: undefined };

t.test('transfer quote from payin_amount: corridor from the operators, FX 1, payout = payin − fee', async (t) => {
  fresh().when(quote(transfer)).thenMatch(t, [{
    data: {
      flow_type: 'transfer', corridor_code: 'CM-SN-XAF-XOF', corridor_type: 'cross_border', payer_operator_code: 'CM_MTN_MOMO',
      recipient_operator_code: 'SN_WAVE_MOMO', payin_amount: '10000', payin_currency: 'XAF', payout_amount: '9800', payout_currency: 'XOF',
      send_amount: '10000', receive_amount: '9800', total_fee: '200', pricing: { fx_rate: '1', fixed_side: 'send' },
    },
  }]);
  fresh().when(quote({ ...transfer, payerOperatorCode: 'SN_ORANGE_MOMO', payinCurrency: 'XOF' }))
    .thenMatch(t, [{ data: { corridor_code: 'SN-SN-XOF-XOF', corridor_type: 'domestic' } }]);
});

t.test('transfer quote from a fixed payout_amount: the smallest payin that leaves exactly it', async (t) => {
  for (const payout of [100n, 101n, 999n, 9800n, 9801n, 12345n, 500000n]) {
    const [e] = fresh().when(quote({ ...transfer, payinAmount: undefined, payoutAmount: payout.toString() })).events();
    const data = e!.data as QuoteCreated;
    const payin = BigInt(data.payin_amount!);
    t.equal(data.payout_amount, payout.toString());
    t.equal(netOf(payin, DEFAULT_PRICING.transfer), payout, `${payin} leaves ${payout}`);
    t.ok(netOf(payin - 1n, DEFAULT_PRICING.transfer) < payout, `${payin - 1n} would not`);
    t.equal(payin, grossForNet(payout, DEFAULT_PRICING.transfer));
    t.equal(data.pricing.fixed_side, 'receive');
  }
});

t.test('transfer refusals', async (t) => {
  fresh().when(quote({ ...transfer, routing: { ...common.routing, corridors: [] } })).thenThrows(t, 'corridor_not_configured');
  fresh().when(quote({ ...transfer, corridorCode: 'CM-CI-XAF-XOF' })).thenThrows(t, 'unsupported_route', 'corridor_code must match the operators');
  fresh().when(quote({ ...transfer, payoutCurrency: 'XAF' })).thenThrows(t, 'unsupported_route', 'payout currency of another country');
  fresh().when(quote({ ...transfer, payinAmount: '50' })).thenThrows(t, 'amount_out_of_range');
  fresh().when(quote({ ...transfer, payinAmount: undefined, payoutAmount: '1000000' })).thenThrows(t, 'amount_out_of_range', 'the payin it needs exceeds the limit');
});

const created = fresh().when(quote({ ...leg, flow: 'payin', customerId: 'c-1' })).events();
const consume = (patch: Partial<Q.Consume> = {}): Q.QuoteCommand => ({
  type: 'ConsumeQuote', data: { merchantId, flow: 'payin', paymentId: 'pay-1', customerId: 'c-1', now: new Date(at), at, ...patch },
});

t.test('a quote backs one payment: refusals when using it', async (t) => {
  given(created).when(consume()).then(t, [{ type: 'quote.consumed', data: { payment_type: 'payin', payment_id: 'pay-1', at } }]);
  const used = [...created, { type: 'quote.consumed', data: { payment_type: 'payin', payment_id: 'pay-1', at } } as Q.QuoteEvent];
  given(used).when(consume()).then(t, [], 'the same payment again: nothing');
  given(created).when(quote({ ...leg, flow: 'payin', customerId: 'c-1' })).thenNothing(t, 'the same create retried: nothing');
  given(used).when(consume({ paymentId: 'pay-2' })).thenThrows(t, 'quote_not_active');
  given([]).when(consume()).thenThrows(t, 'quote_not_found');
  given(created).when(consume({ merchantId: 'm-2' })).thenThrows(t, 'quote_not_found', "another merchant's quote: not found");
  given(created).when(consume({ flow: 'payout' })).thenThrows(t, 'quote_mismatch', 'a payin quote for a payout');
  given(created).when(consume({ customerId: 'c-2' })).thenThrows(t, 'quote_mismatch', 'another customer');
  given(created).when(consume({ now: new Date(expiresAt) })).thenThrows(t, 'quote_expired');
  t.equal(Q.quoteStatus(given(created).state, new Date('2026-06-01T10:14:59.999Z')), 'active');
  t.equal(Q.quoteStatus(given(created).state, new Date(expiresAt)), 'expired');
  t.equal(Q.quoteStatus(given(used).state, new Date('2027-01-01T00:00:00Z')), 'consumed', 'consumed stays consumed');
});
