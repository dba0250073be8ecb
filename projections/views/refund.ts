// The API JSON of a refund (CONTRACT §9), from its state alone: GET /refunds/{id}, lists, the read
// model and webhook snapshots all use this one function, so they never drift.
import { invariant } from '../../domain/errors.ts';
import type { RefundState } from '../../domain/refund.ts';

export function renderRefund(state: RefundState): Record<string, unknown> {
  invariant(state.exists && state.created, 'rendering a refund that does not exist');
  const c = state.created;
  return {
    id: c.refund_id,
    merchant_id: c.merchant_id,
    payin_id: c.payin_id,
    status: state.status,
    amount: c.amount,
    currency: c.currency,
    recipient: c.recipient,
    reason: c.reason,
    provider_reference: state.provider_reference,
    failure_reason: state.failure_reason,
    provider_failure: state.provider_failure,
    metadata: c.metadata ?? {},
    history: state.history.map((h) => ({ status: h.status, reason: h.reason, created_at: h.created_at })),
    created_at: c.at,
    updated_at: state.updated_at,
  };
}
