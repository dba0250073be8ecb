// The payin aggregate (stream `payin-<id>`): a collection from a payer, backed by one payin quote.
// created → pending (same append as the create: the collection is handed to the provider gateway)
// → completed | failed, once, from the provider's outcome. The OTP never enters an event: only
// whether one was required (the sealed OTP waits in the gateway's vault, see workers/provider-gateway.ts).
import { invariant } from './errors.ts';
import { unreachable, type DomainEvent } from './decider.ts';
import type { QuotePricing } from './quote.ts';
import {
  initialLifecycle, moveTo,
  type LegOutcome, type PaymentLifecycle, type RailParty, type WalletImpact,
} from './payment.ts';

export interface PayinCreated {
  payin_id: string;
  merchant_id: string;
  customer_id: string;
  quote_id: string;
  send_amount: string;
  send_currency: string;
  receive_amount: string;
  receive_currency: string;
  total_fee: string;
  country_code: string;
  operator_code: string;
  rail_type: string;
  source: RailParty;
  pricing: QuotePricing;
  wallet_impact: WalletImpact;
  metadata: Record<string, string>;
  /** The operator requires a one-time password to collect. */
  otp_required: boolean;
  /** One was given: it waits sealed in the gateway's vault under the payin id (never in an event). */
  otp_supplied: boolean;
  at: string;
}

export type PayinEvent =
  | DomainEvent<'payin.created', PayinCreated>
  | DomainEvent<'payin.pending', { reason: string | null; at: string }>
  | DomainEvent<'payin.submitted', { provider_reference: string; at: string }>
  | DomainEvent<'payin.completed', { provider_reference: string | null; at: string }>
  | DomainEvent<'payin.failed', { reason: string; provider_reference: string | null; at: string }>;

export interface PayinState extends PaymentLifecycle {
  exists: boolean;
  created: PayinCreated | null;
}

export const payinDecider = {
  initialState: (): PayinState => ({ exists: false, created: null, ...initialLifecycle() }),
  evolve(s: PayinState, e: PayinEvent): PayinState {
    switch (e.type) {
      case 'payin.created':
        return moveTo({ ...s, exists: true, created: e.data }, 'created', null, e.data.at);
      case 'payin.pending':
        return moveTo(s, 'pending', e.data.reason, e.data.at);
      case 'payin.submitted':
        return { ...s, provider_reference: e.data.provider_reference, submitted_at: e.data.at, updated_at: e.data.at };
      case 'payin.completed':
        return moveTo({ ...s, provider_reference: e.data.provider_reference ?? s.provider_reference, completed_at: e.data.at }, 'completed', null, e.data.at);
      case 'payin.failed':
        return moveTo({
          ...s, provider_reference: e.data.provider_reference ?? s.provider_reference, failure_reason: e.data.reason, failed_at: e.data.at,
        }, 'failed', e.data.reason, e.data.at);
      default:
        return unreachable(e);
    }
  },
};

// ---- decisions ----

/** Created and handed to the provider (pending) in one decision; a retried create decides nothing. */
export function createPayin(s: PayinState, c: PayinCreated): PayinEvent[] {
  if (s.exists) {
    invariant(s.created!.merchant_id === c.merchant_id, `payin ${c.payin_id} belongs to another merchant`);
    return [];
  }
  return [
    { type: 'payin.created', data: c },
    { type: 'payin.pending', data: { reason: 'awaiting the provider', at: c.at } },
  ];
}

/** The provider accepted the collection under this reference (recorded once). */
export function recordSubmission(s: PayinState, c: { providerReference: string; at: string }): PayinEvent[] {
  invariant(s.exists, 'submission for a payin that does not exist');
  if (s.status !== 'pending' || s.provider_reference !== null) return [];
  return [{ type: 'payin.submitted', data: { provider_reference: c.providerReference, at: c.at } }];
}

/** The provider's final outcome; once settled, a replayed or late outcome changes nothing. */
export function settle(s: PayinState, c: LegOutcome & { at: string }): PayinEvent[] {
  invariant(s.exists, 'outcome for a payin that does not exist');
  if (s.status !== 'pending') return [];
  if (c.outcome === 'completed') return [{ type: 'payin.completed', data: { provider_reference: c.providerReference, at: c.at } }];
  return [{ type: 'payin.failed', data: { reason: c.reason, provider_reference: c.providerReference, at: c.at } }];
}
