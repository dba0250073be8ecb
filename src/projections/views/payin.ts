// The API JSON of a payin, from its state alone: GET /payins/{id}, lists, the read model and webhook
// snapshots all use this one function, so they never drift. Never any OTP or secret.
import { invariant } from '../../domain/errors.ts';
import type { PayinState } from '../../domain/payin.ts';
import { impactOf, lifecycleFields } from './payment-common.ts';

export function renderPayin(state: PayinState): Record<string, unknown> {
  invariant(state.exists && state.created, 'rendering a payin that does not exist');
  const c = state.created;
  return {
    id: c.payin_id,
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
    source: c.source,
    metadata: c.metadata,
    created_at: c.at,
    updated_at: state.updated_at,
    completed_at: state.completed_at,
    failed_at: state.failed_at,
  };
}
