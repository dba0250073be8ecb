// The API JSON of a payin, from its state alone: GET /payins/{id}, lists, the read model and webhook
// snapshots all use this one function, so they never drift. Never any OTP or secret.
import { invariant } from '../../domain/errors.ts';
import type { PayinState } from '../../domain/payin.ts';
import { refundedOf } from '../../domain/payin-refunds.ts';
import { formatMoney } from '../../domain/money.ts';
import { renderPayment } from './payment-common.ts';

export function renderPayin(state: PayinState): Record<string, unknown> {
  invariant(state.exists && state.created, 'rendering a payin that does not exist');
  const c = state.created;
  return {
    ...renderPayment(c.payin_id, c, state, { source: c.source }),
    // Its refunds (CONTRACT §9): the sum of the completed ones, and every refund's id in order.
    refunded_amount: formatMoney(refundedOf(state.refunds ?? [])),
    refund_ids: (state.refunds ?? []).map((r) => r.refund_id),
    // The payment link it was paid through (CONTRACT §16); null for every other payin.
    payment_link_id: c.payment_link_id ?? null,
  };
}
