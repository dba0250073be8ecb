// A payin's refundable amount (CONTRACT §9), kept on the payin's own stream so that every refund
// of one payin is decided in turn on it: a refund's claim is appended to the payin with its expected
// version, beside the refund's creation and the wallet's hold (commands/refunds.ts), so 20 refunds
// racing on one payin see each other's claims (a conflict is decided again on the fresh payin) and
// the non-failed claims never sum to more than the payin's send_amount. A failed refund gives its
// claim back; a completed one counts in `refunded_amount`.
import { refuse } from './errors.ts';
import type { DomainEvent } from './decider.ts';
import { formatMoney, type Money } from './money.ts';

export type RefundClaimStatus = 'open' | 'completed' | 'failed';

export interface RefundClaim {
  refund_id: string;
  /** Whole francs, decimal string. */
  amount: string;
  status: RefundClaimStatus;
}

export type PayinRefundEvent =
  | DomainEvent<'payin.refund_claimed', { refund_id: string; amount: string; at: string }>
  | DomainEvent<'payin.refund_settled', { refund_id: string; outcome: 'completed' | 'failed'; at: string }>;

export const isPayinRefundEvent = (e: { type: string }): e is PayinRefundEvent =>
  e.type === 'payin.refund_claimed' || e.type === 'payin.refund_settled';

/** What a refund asks of its payin, each a plain value. */
export type PayinRefundCommand =
  | { type: 'ClaimRefund'; data: { refundId: string; merchantId: string; amount: Money | undefined; at: string } }
  | { type: 'SettleRefund'; data: { refundId: string; outcome: 'completed' | 'failed'; at: string } };

/** The payin as a refund sees it (payin.ts's state has these fields). */
export interface RefundablePayin {
  exists: boolean;
  status: string;
  created: { merchant_id: string; send_amount: string } | null;
  refunds: RefundClaim[];
}

const sum = (claims: RefundClaim[]) => claims.reduce((a, c) => a + BigInt(c.amount), 0n);

/** send_amount less every refund that has not failed (open or completed). */
export const refundableOf = (p: RefundablePayin): Money =>
  BigInt(p.created?.send_amount ?? '0') - sum(p.refunds.filter((c) => c.status !== 'failed'));

/** The sum of the completed refunds. */
export const refundedOf = (refunds: RefundClaim[]): Money => sum(refunds.filter((c) => c.status === 'completed'));

export function evolveRefunds(refunds: RefundClaim[], e: PayinRefundEvent): RefundClaim[] {
  if (e.type === 'payin.refund_claimed') return [...refunds, { refund_id: e.data.refund_id, amount: e.data.amount, status: 'open' }];
  const { refund_id, outcome } = e.data;
  return refunds.map((c) => (c.refund_id === refund_id ? { ...c, status: outcome } : c));
}

/**
 * A refund's claim on the payin's refundable amount: only the merchant's own completed payin
 * (another merchant's is `payin_not_found`, as an unknown one), at most what is left (the amount
 * defaults to it). A refund id claimed already decides nothing (a retried create).
 */
function claim(p: RefundablePayin, c: Extract<PayinRefundCommand, { type: 'ClaimRefund' }>['data']): PayinRefundEvent[] {
  if (!p.exists || p.created?.merchant_id !== c.merchantId) refuse('payin_not_found', 'Payin not found', [{ field: 'payin_id', message: 'no such payin' }]);
  if (p.refunds.some((x) => x.refund_id === c.refundId)) return [];
  if (p.status !== 'completed') {
    refuse('refund_not_allowed', `Only a completed payin can be refunded (this one is ${p.status})`, [{ field: 'payin_id', message: `is ${p.status}` }]);
  }
  const left = refundableOf(p);
  const amount = c.amount ?? left;
  if (amount <= 0n || amount > left) {
    refuse('refund_exceeds_payin', `${formatMoney(amount)} exceeds the ${formatMoney(left)} left to refund on this payin`, [{ field: 'amount', message: `at most ${formatMoney(left)}` }]);
  }
  return [{ type: 'payin.refund_claimed', data: { refund_id: c.refundId, amount: formatMoney(amount), at: c.at } }];
}

/** A refund's outcome, once: only an open claim settles (a replayed outcome decides nothing). */
function settle(p: RefundablePayin, c: Extract<PayinRefundCommand, { type: 'SettleRefund' }>['data']): PayinRefundEvent[] {
  const open = p.refunds.find((x) => x.refund_id === c.refundId && x.status === 'open');
  return open ? [{ type: 'payin.refund_settled', data: { refund_id: c.refundId, outcome: c.outcome, at: c.at } }] : [];
}

export function decideRefundOnPayin(command: PayinRefundCommand, p: RefundablePayin): PayinRefundEvent[] {
  return command.type === 'ClaimRefund' ? claim(p, command.data) : settle(p, command.data);
}
