// The API JSON of a quote, from its state: GET /quotes/{id}, lists and the read model share it.
// `status` is computed with the reader's clock: a quote past expires_at reads `expired` although
// nothing was appended (time passing is not an event). Without a clock, the stored status
// (`active` or `consumed`) is rendered and readers recompute it (see withQuoteStatus).
import { invariant } from '../../domain/errors.ts';
import { quoteStatus, type QuoteState, type QuoteStatus } from '../../domain/quote.ts';

export function renderQuote(state: QuoteState, now?: Date): Record<string, unknown> {
  invariant(state.exists && state.quote, 'rendering a quote that does not exist');
  const q = state.quote;
  const status: QuoteStatus = now ? quoteStatus(state, now) : state.consumed ? 'consumed' : 'active';
  return {
    id: q.quote_id,
    merchant_id: q.merchant_id,
    customer_id: q.customer_id,
    flow_type: q.flow_type,
    status,
    expires_at: q.expires_at,
    send_amount: q.send_amount,
    send_currency: q.send_currency,
    receive_amount: q.receive_amount,
    receive_currency: q.receive_currency,
    total_fee: q.total_fee,
    fx_rate: q.pricing.fx_rate,
    country_code: q.country_code,
    operator_code: q.operator_code,
    rail_type: q.rail_type,
    corridor_code: q.corridor_code,
    corridor_type: q.corridor_type,
    payer_operator_code: q.payer_operator_code,
    recipient_operator_code: q.recipient_operator_code,
    payin_amount: q.payin_amount,
    payin_currency: q.payin_currency,
    payout_amount: q.payout_amount,
    payout_currency: q.payout_currency,
    pricing: q.pricing,
    wallet_impact: q.wallet_impact,
    // CONTRACT §14; quotes made before operators had an availability were made on operational ones.
    operator_availability: q.operator_availability ?? 'operational',
    consumed_by: state.consumed ? { type: state.consumed.payment_type, id: state.consumed.payment_id } : null,
    consumed_at: state.consumed?.at ?? null,
    created_at: q.at,
  };
}

/** A stored rendering with its status recomputed for `now` (an active quote past expires_at is expired). */
export function withQuoteStatus(stored: Record<string, unknown>, now: Date): Record<string, unknown> {
  // Rows stored before CONTRACT §14 lack operator_availability (their operators were all operational).
  const body = 'operator_availability' in stored ? stored : { ...stored, operator_availability: 'operational' };
  if (body.status === 'active' && now.getTime() >= Date.parse(String(body.expires_at))) return { ...body, status: 'expired' };
  return body;
}
