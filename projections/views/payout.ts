// The API JSON of a payout, from its state alone: GET /payouts/{id}, lists, the read model and
// webhook snapshots all use this one function, so they never drift.
import { invariant } from '../../domain/errors.ts';
import type { PayoutState } from '../../domain/payout.ts';
import { renderPayment } from './payment-common.ts';

export function renderPayout(state: PayoutState): Record<string, unknown> {
  invariant(state.exists && state.created, 'rendering a payout that does not exist');
  const c = state.created;
  return renderPayment(c.payout_id, c, state, { recipient: c.recipient, payment_reason_text: c.payment_reason_text });
}
