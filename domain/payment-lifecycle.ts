// The lifecycle payins, payouts and refunds share, written once: created → pending (same decision as the
// create: the leg is handed to the provider gateway) → submitted (the provider's reference, once)
// → completed | failed, once, from the provider's outcome. Each payment kind names its events
// `<kind>.<step>` (payin.created, payout.failed…) and adds its own create rules (payin.ts, payout.ts, refund.ts).
import { invariant } from './errors.ts';
import { unreachable, type DomainEvent } from './decider.ts';
import type { QuoteCreated, QuotePricing } from './quote-pricing.ts';
import type { LegOutcome, PaymentLifecycle, PaymentStatus, WalletImpact } from './payment.ts';
import { failureOfCode, recordedFailure, type FailureReason, type ProviderFailure } from './failure-reasons.ts';

type PaymentKind = 'payin' | 'payout' | 'refund';

/** Each step's event data; `created` is the kind's own. */
interface StepData<Created> {
  created: Created;
  pending: { reason: string | null; at: string };
  submitted: { provider_reference: string; at: string };
  completed: { provider_reference: string | null; at: string };
  /**
   * `reason`: the provider's own code. `failure_reason` and `provider_failure` (CONTRACT §15) are
   * absent from the events recorded before them: evolve reads those from `reason`.
   */
  failed: { reason: string; failure_reason?: FailureReason; provider_failure?: ProviderFailure | null; provider_reference: string | null; at: string };
}
type Step = keyof StepData<unknown>;

/** A payment's events: `payin.created`, `payin.pending`… for K = 'payin'. */
export type PaymentEvent<K extends PaymentKind, Created> = {
  [S in Step]: DomainEvent<`${K}.${S}`, StepData<Created>[S]>;
}[Step];

/** The same event without its kind, for the one evolve both kinds share. */
type StepEvent<Created> = { [S in Step]: { step: S; data: StepData<Created>[S] } }[Step];

/** What a payment's create event carries at least. */
interface CreatedBase {
  merchant_id: string;
  at: string;
}

/** What a payin's and a payout's creation both record (each adds its id and its party). */
export interface PaymentCreated extends CreatedBase {
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
  pricing: QuotePricing;
  wallet_impact: WalletImpact;
  metadata: Record<string, string>;
}

export interface PaymentState<Created> extends PaymentLifecycle {
  exists: boolean;
  created: Created | null;
}

/** The commands both kinds take once created, each a plain value. */
export type PaymentLifecycleCommand =
  | { type: 'RecordSubmission'; data: { providerReference: string; at: string } }
  | { type: 'Settle'; data: LegOutcome & { at: string } };

const initialLifecycle = (): PaymentLifecycle => ({
  status: 'created', provider_reference: null, failure_reason: null, provider_failure: null, history: [], updated_at: '',
  submitted_at: null, completed_at: null, failed_at: null,
});

function moveTo<S extends PaymentLifecycle>(s: S, status: PaymentStatus, reason: string | null, at: string): S {
  return { ...s, status, history: [...s.history, { status, reason, created_at: at }], updated_at: at };
}

/**
 * What a payment copies from the quote it consumes: the amounts and the route, as quoted (each kind
 * adds its party, then the quote's pricing and wallet impact, in its event's field order).
 */
export function asQuoted(q: QuoteCreated) {
  return {
    quote_id: q.quote_id, send_amount: q.send_amount, send_currency: q.send_currency, receive_amount: q.receive_amount,
    receive_currency: q.receive_currency, total_fee: q.total_fee, country_code: q.country_code, operator_code: q.operator_code,
    rail_type: q.rail_type,
  };
}

function eventOf<K extends PaymentKind, C, S extends Step>(kind: K, step: S, data: StepData<C>[S]): PaymentEvent<K, C> {
  return { type: `${kind}.${step}`, data } as PaymentEvent<K, C>;
}

function evolvePayment<K extends PaymentKind, C extends CreatedBase>(s: PaymentState<C>, e: PaymentEvent<K, C>): PaymentState<C> {
  const x = { step: e.type.slice(e.type.indexOf('.') + 1), data: e.data } as StepEvent<C>;
  switch (x.step) {
    case 'created':
      return moveTo({ ...s, exists: true, created: x.data }, 'created', null, x.data.at);
    case 'pending':
      return moveTo(s, 'pending', x.data.reason, x.data.at);
    case 'submitted':
      return { ...s, provider_reference: x.data.provider_reference, submitted_at: x.data.at, updated_at: x.data.at };
    case 'completed':
      return moveTo({ ...s, provider_reference: x.data.provider_reference ?? s.provider_reference, completed_at: x.data.at }, 'completed', null, x.data.at);
    case 'failed': {
      // The history says why in the merchant's words too; the provider's code is in provider_failure.
      const f = recordedFailure(x.data);
      return moveTo({
        ...s, provider_reference: x.data.provider_reference ?? s.provider_reference, failure_reason: f.failure_reason,
        provider_failure: f.provider_failure, failed_at: x.data.at,
      }, 'failed', f.failure_reason, x.data.at);
    }
    default:
      return unreachable(x);
  }
}

/**
 * Created and handed to the provider (pending) in one decision. A retried create decides nothing;
 * the kind's create rules (`decideCreated`: party, OTP, quote…) run only for a payment not yet created.
 */
function createPayment<K extends PaymentKind, C extends CreatedBase>(
  kind: K, s: PaymentState<C>, c: { paymentId: string; merchantId: string }, decideCreated: () => C,
): PaymentEvent<K, C>[] {
  if (s.exists) {
    invariant(s.created!.merchant_id === c.merchantId, `${kind} ${c.paymentId} belongs to another merchant`);
    return [];
  }
  const created = decideCreated();
  return [eventOf(kind, 'created', created), eventOf(kind, 'pending', { reason: 'awaiting the provider', at: created.at })];
}

/** The provider accepted the leg under this reference (recorded once). */
function recordSubmission<K extends PaymentKind, C>(kind: K, s: PaymentState<C>, c: { providerReference: string; at: string }): PaymentEvent<K, C>[] {
  invariant(s.exists, `submission for a ${kind} that does not exist`);
  if (s.status !== 'pending' || s.provider_reference !== null) return [];
  return [eventOf(kind, 'submitted', { provider_reference: c.providerReference, at: c.at })];
}

/** The provider's final outcome; once settled, a replayed or late outcome changes nothing. */
function settle<K extends PaymentKind, C>(kind: K, s: PaymentState<C>, c: LegOutcome & { at: string }): PaymentEvent<K, C>[] {
  invariant(s.exists, `outcome for a ${kind} that does not exist`);
  if (s.status !== 'pending') return [];
  if (c.outcome === 'completed') return [eventOf(kind, 'completed', { provider_reference: c.providerReference, at: c.at })];
  const f = c.failure ?? failureOfCode(c.reason);
  return [eventOf(kind, 'failed', {
    reason: c.reason, failure_reason: f.failure_reason, provider_failure: f.provider_failure, provider_reference: c.providerReference, at: c.at,
  })];
}

/** The lifecycle commands, decided alike for every kind. */
function decideLifecycle<K extends PaymentKind, C>(kind: K, command: PaymentLifecycleCommand, s: PaymentState<C>): PaymentEvent<K, C>[] {
  switch (command.type) {
    case 'RecordSubmission':
      return recordSubmission(kind, s, command.data);
    case 'Settle':
      return settle(kind, s, command.data);
    default:
      return unreachable(command);
  }
}

/**
 * The shared lifecycle of payments of kind `kind`: initial state, evolve, the create both kinds
 * wrap their own rules in, and the lifecycle commands, decided alike.
 */
export function paymentLifecycle<K extends PaymentKind, C extends CreatedBase>(kind: K) {
  return {
    initialState: (): PaymentState<C> => ({ exists: false, created: null, ...initialLifecycle() }),
    evolve: (s: PaymentState<C>, e: PaymentEvent<K, C>) => evolvePayment(s, e),
    create: (s: PaymentState<C>, c: { paymentId: string; merchantId: string }, decideCreated: () => C) => createPayment(kind, s, c, decideCreated),
    decideLifecycle: (command: PaymentLifecycleCommand, s: PaymentState<C>) => decideLifecycle<K, C>(kind, command, s),
  };
}
