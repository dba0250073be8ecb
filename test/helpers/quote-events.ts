import { randomUUID } from 'node:crypto';

// A quote's domain events as the store holds them, for read-model tests that append directly.
export const quoteCreated = (id: string, merchant: string) => ({
  type: 'quote.created',
  data: {
    quote_id: id, merchant_id: merchant, customer_id: null, flow_type: 'payin', country_code: 'CM', operator_code: 'CM_MTN_MOMO',
    rail_type: 'mobile_money', send_amount: '5000', send_currency: 'XAF', receive_amount: '4925', receive_currency: 'XAF',
    total_fee: '75', pricing: {}, wallet_impact: {}, expires_at: new Date(Date.now() + 900_000).toISOString(), at: new Date().toISOString(),
  },
});

export const quoteConsumed = (id: string) => ({
  type: 'quote.consumed',
  data: { quote_id: id, by: { type: 'payin', id: randomUUID() }, at: new Date().toISOString() },
});
