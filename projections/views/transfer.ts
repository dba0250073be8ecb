// The transfer's API JSON: the same function renders GET answers, list rows and webhook snapshots.
//
// Amounts after a relaunch with another payout_amount (docs/MONEY.md, "Transfers"): the fee was
// charged once, on the collection, so `total_fee` and the quote's pricing figures never change;
// `payout_amount`/`receive_amount` are the current attempt's; `pricing` states the difference
// (`payout_adjustment`), and `wallet_impact` adds each relaunched attempt's own effects.
import type { PayoutAttempt, TransferState } from '../../domain/transfer.ts';
import { currentAttempt } from '../../domain/transfer.ts';
import type { WalletEffect, WalletImpact } from '../../domain/payment.ts';
import { formatMoney } from '../../domain/money.ts';

/** The quote's pricing, plus what a relaunch with another amount changed (never the fee). */
function pricingOf(s: TransferState, payoutAmount: string): Record<string, unknown> {
  const t = s.created!;
  return {
    ...t.pricing,
    fee_charged_on: 'collection',
    quoted_payout_amount: t.payout_amount,
    payout_amount: payoutAmount,
    payout_adjustment: formatMoney(BigInt(payoutAmount) - BigInt(t.payout_amount)),
  };
}

type RenderedEffect = WalletEffect & { attempt?: number; applied: boolean };

/**
 * The quote's statement of effects, which describes the collection and the first disbursement
 * attempt (its amount is the quote's payout_amount), each marked `applied` once it happened; then,
 * per relaunched attempt, its hold and its two possible outcomes with that attempt's amount.
 */
function walletImpactOf(s: TransferState): { effects: RenderedEffect[] } {
  const t = s.created!;
  const attempt = (n: number) => s.attempts.find((a) => a.attempt === n);
  const reached: Record<string, boolean> = {
    created: true,
    collection_completed: s.payin_status === 'completed',
    collection_failed: s.payin_status === 'failed',
    disbursement_completed: attempt(1)?.status === 'completed',
    disbursement_failed: attempt(1)?.status === 'failed',
  };
  const quoted = (t.wallet_impact as WalletImpact | null)?.effects ?? [];
  const effects: RenderedEffect[] = quoted.map((e) => ({
    ...e, ...(e.when.startsWith('disbursement_') ? { attempt: 1 } : {}), applied: reached[e.when] ?? false,
  }));
  for (const a of s.attempts) {
    if (a.attempt === 1) continue;
    const amount = BigInt(a.amount);
    const effect = (when: string, available: bigint, reserved: bigint, description: string, applied: boolean): RenderedEffect => ({
      currency: t.payout_currency, when, attempt: a.attempt, available_delta: formatMoney(available), reserved_delta: formatMoney(reserved), description, applied,
    });
    effects.push(
      effect('payout_relaunched', -amount, amount, 'the relaunched payout_amount moves from available to reserved', true),
      effect('disbursement_completed', 0n, -amount, 'the reservation is debited when this attempt completes', a.status === 'completed'),
      effect('disbursement_failed', amount, -amount, 'the reservation is released if this attempt fails', a.status === 'failed'),
    );
  }
  return { effects };
}

/**
 * Why a failed transfer failed: the failed leg's failure (the collection's, else the current
 * disbursement attempt's); null unless failed.
 */
function failureOf(s: TransferState): Pick<PayoutAttempt, 'failure_reason' | 'provider_failure'> {
  if (s.status !== 'failed') return { failure_reason: null, provider_failure: null };
  const leg = s.payin_status === 'failed' ? s.collection : currentAttempt(s);
  return { failure_reason: leg?.failure_reason ?? null, provider_failure: leg?.provider_failure ?? null };
}

/** How each leg ran: the collection, then every disbursement attempt. */
function executionOf(s: TransferState): Record<string, unknown> {
  const t = s.created!;
  return {
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
      provider_failure: s.collection.provider_failure,
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
      provider_failure: a.provider_failure,
    })),
  };
}

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
    metadata: t.metadata ?? {}, // {} when none was sent, on every resource (issue 31)
    pricing: pricingOf(s, payoutAmount),
    wallet_impact: walletImpactOf(s),
    // The seed's snapshot fields, flat, for webhook receivers.
    collection_reference: s.collection.provider_reference,
    collection_completed_at: s.collection.completed_at,
    disbursement_reference: last?.provider_reference ?? null,
    disbursement_completed_at: last?.completed_at ?? null,
    disbursement_failed_at: last?.failed_at ?? null,
    completed_at: completedAt,
    ...failureOf(s),
    execution: executionOf(s),
    history: s.history.map((h) => ({ status: h.status, reason: h.reason, created_at: h.created_at })),
    created_at: t.at,
    updated_at: s.updated_at,
  };
}
