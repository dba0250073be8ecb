// Rendering shared by payins and payouts: the wallet impact with what has already applied.
import type { PaymentLifecycle, WalletImpact } from '../../domain/payment.ts';

/** Each effect of the quote's statement, marked `applied` once the payment has reached its moment. */
export function impactOf(impact: WalletImpact, s: PaymentLifecycle): Record<string, unknown> {
  const reached = (when: string) => (when === 'created' ? true : when === s.status);
  return { effects: impact.effects.map((e) => ({ ...e, applied: reached(e.when) })) };
}

export const lifecycleFields = (s: PaymentLifecycle) => ({
  status: s.status,
  provider_reference: s.provider_reference,
  failure_reason: s.failure_reason,
  history: s.history.map((h) => ({ status: h.status, reason: h.reason, created_at: h.created_at })),
});
