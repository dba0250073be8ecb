// The API JSON of a payout, from its state alone: GET /payouts/{id}, lists, the read model and
// webhook snapshots all use this one function, so they never drift.
import { invariant } from '../../domain/errors.ts';
import type { PayoutState } from '../../domain/payout.ts';
import { impactOf, lifecycleFields } from './payment-common.ts';

export function renderPayout(state: PayoutState): Record<string, unknown> {
  invariant(state.exists && state.created, 'rendering a payout that does not exist');
  const c = state.created;
  return {
    id: c.payout_id,
    merchant_id: c.merchant_id,
    customer_id: c.customer_id,
    quote_id: c.quote_id,
    ...lifecycleFields(state),
    send_amount: c.send_amount,
    send_currency: c.send_currency,
    receive_amount: c.receive_amount,
    receive_currency: c.receive_currency,
    total_fee: c.total_fee,
    country_code: c.country_code,
    operator_code: c.operator_code,
    rail_type: c.rail_type,
    wallet_impact: impactOf(c.wallet_impact, state),
    pricing: c.pricing,
    recipient: c.recipient,
    payment_reason_text: c.payment_reason_text,
    metadata: c.metadata,
    created_at: c.at,
    updated_at: state.updated_at,
    completed_at: state.completed_at,
    failed_at: state.failed_at,
  };
}
