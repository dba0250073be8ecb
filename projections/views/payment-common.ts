// Rendering shared by payins and payouts: the wallet impact with what has already applied.
import type { PaymentLifecycle, WalletImpact } from '../../domain/payment.ts';
import type { PaymentCreated } from '../../domain/payment-lifecycle.ts';

/** Each effect of the quote's statement, marked `applied` once the payment has reached its moment. */
export function impactOf(impact: WalletImpact, s: PaymentLifecycle): Record<string, unknown> {
  const reached = (when: string) => (when === 'created' ? true : when === s.status);
  return { effects: impact.effects.map((e) => ({ ...e, applied: reached(e.when) })) };
}

export const lifecycleFields = (s: PaymentLifecycle) => ({
  status: s.status,
  provider_reference: s.provider_reference,
  failure_reason: s.failure_reason,
  provider_failure: s.provider_failure,
  history: s.history.map((h) => ({ status: h.status, reason: h.reason, created_at: h.created_at })),
});

/**
 * A payment's API JSON: the fields payins and payouts share, with the flow's own fields (`source`;
 * `recipient` and `payment_reason_text`) after `pricing`, where each has always answered them.
 */
export function renderPayment(id: string, c: PaymentCreated, s: PaymentLifecycle, own: Record<string, unknown>): Record<string, unknown> {
  return {
    id,
    merchant_id: c.merchant_id,
    customer_id: c.customer_id,
    quote_id: c.quote_id,
    ...lifecycleFields(s),
    send_amount: c.send_amount,
    send_currency: c.send_currency,
    receive_amount: c.receive_amount,
    receive_currency: c.receive_currency,
    total_fee: c.total_fee,
    country_code: c.country_code,
    operator_code: c.operator_code,
    rail_type: c.rail_type,
    wallet_impact: impactOf(c.wallet_impact, s),
    pricing: c.pricing,
    ...own,
    metadata: c.metadata ?? {}, // {} when none was sent, on every resource (issue 31)
    created_at: c.at,
    updated_at: s.updated_at,
    completed_at: s.completed_at,
    failed_at: s.failed_at,
  };
}
