// The transfer's API JSON: the same function renders GET answers, list rows and webhook snapshots.
import type { TransferState } from '../../domain/transfer.ts';
import { currentAttempt } from '../../domain/transfer.ts';

export function renderTransfer(s: TransferState): Record<string, unknown> {
  const t = s.created!;
  const last = currentAttempt(s);
  const payoutAmount = last?.amount ?? t.payout_amount;
  const recipient = last?.recipient ?? t.recipient;
  const completedAt = s.status === 'completed' ? (last?.completed_at ?? s.updated_at) : null;
  return {
    id: t.transfer_id,
    merchant_id: t.merchant_id,
    customer_id: t.customer_id,
    quote_id: t.quote_id,
    status: s.status,
    payin_status: s.payin_status,
    payout_status: s.payout_status,
    send_amount: t.payin_amount,
    send_currency: t.payin_currency,
    receive_amount: payoutAmount,
    receive_currency: t.payout_currency,
    payin_amount: t.payin_amount,
    payin_currency: t.payin_currency,
    payout_amount: payoutAmount,
    payout_currency: t.payout_currency,
    total_fee: t.total_fee,
    corridor_code: t.corridor_code,
    corridor_type: t.corridor_type,
    payer_operator_code: t.payer_operator_code,
    recipient_operator_code: t.recipient_operator_code,
    payer: t.payer,
    recipient,
    payment_reason_code: t.payment_reason_code,
    sender_source_of_funds: t.sender_source_of_funds,
    sender_occupation: t.sender_occupation,
    metadata: t.metadata,
    pricing: t.pricing,
    wallet_impact: t.wallet_impact,
    // The seed's snapshot fields, flat, for webhook receivers.
    collection_reference: s.collection.provider_reference,
    collection_completed_at: s.collection.completed_at,
    disbursement_reference: last?.provider_reference ?? null,
    disbursement_completed_at: last?.completed_at ?? null,
    disbursement_failed_at: last?.failed_at ?? null,
    completed_at: completedAt,
    failure_reason: s.status === 'failed' ? (s.history[s.history.length - 1]?.reason ?? null) : null,
    execution: {
      collection: {
        leg_reference: s.collection.leg_reference,
        status: s.payin_status,
        provider_reference: s.collection.provider_reference,
        operator_code: t.payer_operator_code,
        amount: t.payin_amount,
        currency: t.payin_currency,
        started_at: s.collection.started_at,
        completed_at: s.collection.completed_at,
        failed_at: s.collection.failed_at,
        failure_reason: s.collection.failure_reason,
      },
      disbursements: s.attempts.map((a) => ({
        attempt: a.attempt,
        leg_reference: a.leg_reference,
        status: a.status,
        provider_reference: a.provider_reference,
        operator_code: a.recipient.operator_code ?? null,
        amount: a.amount,
        currency: t.payout_currency,
        started_at: a.started_at,
        completed_at: a.completed_at,
        failed_at: a.failed_at,
        failure_reason: a.failure_reason,
      })),
    },
    history: s.history.map((h) => ({ status: h.status, reason: h.reason, created_at: h.created_at })),
    created_at: t.at,
    updated_at: s.updated_at,
  };
}
