// The payout aggregate (stream `payout-<id>`): a disbursement to a recipient from the merchant's
// wallet, backed by one payout quote. At create, send_amount is held in the wallet (same atomic
// append: quote consumed + payout created + wallet.funds_held, hold id = payout id).
// created → pending → completed (the hold is posted) | failed (the hold is released).
import { invariant } from './errors.ts';
import { unreachable, type DomainEvent } from './decider.ts';
import type { QuotePricing } from './quote.ts';
import {
  initialLifecycle, moveTo,
  type LegOutcome, type PaymentLifecycle, type Recipient, type WalletImpact,
} from './payment.ts';

export interface PayoutCreated {
  payout_id: string;
  merchant_id: string;
  customer_id: string;
  quote_id: string;
  /** Debited from the merchant's wallet (held at create). */
  send_amount: string;
  send_currency: string;
  /** What the recipient gets: send_amount − total_fee. */
  receive_amount: string;
  receive_currency: string;
  total_fee: string;
  country_code: string;
  operator_code: string;
  rail_type: string;
  recipient: Recipient;
  payment_reason_text: string;
  pricing: QuotePricing;
  wallet_impact: WalletImpact;
  metadata: Record<string, string>;
  /** The wallet hold made at create (its id). */
  hold_id: string;
  at: string;
}

export type PayoutEvent =
  | DomainEvent<'payout.created', PayoutCreated>
  | DomainEvent<'payout.pending', { reason: string | null; at: string }>
  | DomainEvent<'payout.submitted', { provider_reference: string; at: string }>
  | DomainEvent<'payout.completed', { provider_reference: string | null; at: string }>
  | DomainEvent<'payout.failed', { reason: string; provider_reference: string | null; at: string }>;

export interface PayoutState extends PaymentLifecycle {
  exists: boolean;
  created: PayoutCreated | null;
}

export const payoutDecider = {
  initialState: (): PayoutState => ({ exists: false, created: null, ...initialLifecycle() }),
  evolve(s: PayoutState, e: PayoutEvent): PayoutState {
    switch (e.type) {
      case 'payout.created':
        return moveTo({ ...s, exists: true, created: e.data }, 'created', null, e.data.at);
      case 'payout.pending':
        return moveTo(s, 'pending', e.data.reason, e.data.at);
      case 'payout.submitted':
        return { ...s, provider_reference: e.data.provider_reference, submitted_at: e.data.at, updated_at: e.data.at };
      case 'payout.completed':
        return moveTo({ ...s, provider_reference: e.data.provider_reference ?? s.provider_reference, completed_at: e.data.at }, 'completed', null, e.data.at);
      case 'payout.failed':
        return moveTo({
          ...s, provider_reference: e.data.provider_reference ?? s.provider_reference, failure_reason: e.data.reason, failed_at: e.data.at,
        }, 'failed', e.data.reason, e.data.at);
      default:
        return unreachable(e);
    }
  },
};

// ---- decisions ----

export function createPayout(s: PayoutState, c: PayoutCreated): PayoutEvent[] {
  if (s.exists) {
    invariant(s.created!.merchant_id === c.merchant_id, `payout ${c.payout_id} belongs to another merchant`);
    return [];
  }
  return [
    { type: 'payout.created', data: c },
    { type: 'payout.pending', data: { reason: 'awaiting the provider', at: c.at } },
  ];
}

export function recordSubmission(s: PayoutState, c: { providerReference: string; at: string }): PayoutEvent[] {
  invariant(s.exists, 'submission for a payout that does not exist');
  if (s.status !== 'pending' || s.provider_reference !== null) return [];
  return [{ type: 'payout.submitted', data: { provider_reference: c.providerReference, at: c.at } }];
}

export function settle(s: PayoutState, c: LegOutcome & { at: string }): PayoutEvent[] {
  invariant(s.exists, 'outcome for a payout that does not exist');
  if (s.status !== 'pending') return [];
  if (c.outcome === 'completed') return [{ type: 'payout.completed', data: { provider_reference: c.providerReference, at: c.at } }];
  return [{ type: 'payout.failed', data: { reason: c.reason, provider_reference: c.providerReference, at: c.at } }];
}
