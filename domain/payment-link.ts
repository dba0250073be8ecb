// The payment link aggregate (stream `payment-link-<id>`, CONTRACT §16): a fixed amount a merchant
// shares as a URL; payers pay it on the service's page. The link counts its payins: each one holds a
// place from its create (`payment_started`, in the same atomic append as the payin's create) until
// it fails (`payment_ended` failed: the place is freed) or completes (`payment_ended` completed: the
// place is used for good). A payin may start only while completed + pending < max_payments, so a link
// never ends with more completed payins than max_payments, whatever the order of the outcomes.
// Pure: the clock arrives in the commands; `linkStatus` computes `expired` from a given now.
import { refuse } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import type { Currency } from './catalogue.ts';
import { checkAmountRange, formatMoney, parseAmount } from './money.ts';

export interface PaymentLinkCreated {
  payment_link_id: string;
  merchant_id: string;
  /** Whole francs, decimal string: what every payer pays (the fee comes out of it). */
  amount: string;
  currency: Currency;
  description: string;
  /** The customer every payin of the link is for; null: each payer becomes a new customer. */
  customer_id: string | null;
  expires_at: string | null;
  /** Completed payins the link accepts; null: unlimited. */
  max_payments: number | null;
  metadata: Record<string, string>;
  at: string;
}

export type PaymentLinkEvent =
  | DomainEvent<'payment_link.created', PaymentLinkCreated>
  | DomainEvent<'payment_link.deactivated', { payment_link_id: string; at: string }>
  | DomainEvent<'payment_link.payment_started', { payment_link_id: string; payin_id: string; at: string }>
  | DomainEvent<'payment_link.payment_ended', { payment_link_id: string; payin_id: string; outcome: PaymentOutcome; at: string }>;

export type PaymentOutcome = 'completed' | 'failed';

export interface PaymentLinkState {
  exists: boolean;
  created: PaymentLinkCreated | null;
  deactivated_at: string | null;
  /** Payins started and not yet ended, each holding a place. */
  pending: string[];
  /** Completed payins (`payments_count`). */
  completed: number;
  failed: number;
  updated_at: string;
}

export type PaymentLinkStatus = 'active' | 'inactive' | 'completed' | 'expired';

/** The longest description a link takes (it is shown on the payer's page). */
export const MAX_DESCRIPTION_LENGTH = 500;

export interface CreatePaymentLink {
  linkId: string;
  merchantId: string;
  amount: string;
  currency: string;
  description: string;
  customerId: string | null;
  expiresAt: string | null;
  maxPayments: number | null;
  metadata: Record<string, string>;
  at: string;
}

export type PaymentLinkCommand =
  | { type: 'CreatePaymentLink'; data: CreatePaymentLink }
  | { type: 'DeactivatePaymentLink'; data: { merchantId: string; at: string } }
  | { type: 'StartPayment'; data: { payinId: string; now: Date; at: string } }
  | { type: 'EndPayment'; data: { payinId: string; outcome: PaymentOutcome; at: string } };

/** What a link's status is computed from (its state, or its read model's row). */
export interface StatusFacts {
  deactivated: boolean;
  /** Completed payins. */
  completed: number;
  max_payments: number | null;
  expires_at: string | null;
}

/**
 * The status at `now`: deactivated first (the merchant's word), then completed (every place used),
 * then expired, else active. Without `now`, the status that only events change (never `expired`).
 */
export function statusOf(f: StatusFacts, now?: Date): PaymentLinkStatus {
  if (f.deactivated) return 'inactive';
  if (f.max_payments !== null && f.completed >= f.max_payments) return 'completed';
  if (now !== undefined && f.expires_at !== null && Date.parse(f.expires_at) <= now.getTime()) return 'expired';
  return 'active';
}

export const statusFacts = (s: PaymentLinkState): StatusFacts => ({
  deactivated: s.deactivated_at !== null, completed: s.completed, max_payments: s.created!.max_payments, expires_at: s.created!.expires_at,
});

/** The link's status at `now`. */
export const linkStatus = (s: PaymentLinkState, now: Date): PaymentLinkStatus => statusOf(statusFacts(s), now);

const initialState = (): PaymentLinkState => ({ exists: false, created: null, deactivated_at: null, pending: [], completed: 0, failed: 0, updated_at: '' });

function evolve(s: PaymentLinkState, e: PaymentLinkEvent): PaymentLinkState {
  switch (e.type) {
    case 'payment_link.created':
      return { ...s, exists: true, created: e.data, updated_at: e.data.at };
    case 'payment_link.deactivated':
      return { ...s, deactivated_at: e.data.at, updated_at: e.data.at };
    case 'payment_link.payment_started':
      return { ...s, pending: [...s.pending, e.data.payin_id], updated_at: e.data.at };
    case 'payment_link.payment_ended': {
      const pending = s.pending.filter((id) => id !== e.data.payin_id);
      const counts = e.data.outcome === 'completed' ? { completed: s.completed + 1 } : { failed: s.failed + 1 };
      return { ...s, ...counts, pending, updated_at: e.data.at };
    }
    default:
      return unreachable(e);
  }
}

export const paymentLinkDecider: CommandDecider<PaymentLinkState, PaymentLinkEvent, PaymentLinkCommand> = {
  initialState,
  evolve,
  decide(command, state) {
    switch (command.type) {
      case 'CreatePaymentLink':
        return decideCreate(command.data, state);
      case 'DeactivatePaymentLink':
        return decideDeactivate(command.data, state);
      case 'StartPayment':
        return decideStart(command.data, state);
      case 'EndPayment':
        return decideEnd(command.data, state);
      default:
        return unreachable(command);
    }
  },
};

const fieldError = (field: string, message: string): never => refuse('bad_request', `${field} ${message}`, [{ field, message }]);

function checkCurrency(currency: string): Currency {
  if (currency !== 'XAF' && currency !== 'XOF') fieldError('currency', 'must be XAF or XOF');
  return currency as Currency;
}

function checkDescription(description: string): string {
  const trimmed = description.trim();
  if (trimmed === '') fieldError('description', 'must not be empty');
  if (trimmed.length > MAX_DESCRIPTION_LENGTH) fieldError('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return trimmed;
}

function checkExpiry(expiresAt: string | null, at: string): string | null {
  if (expiresAt === null) return null;
  const when = Date.parse(expiresAt);
  if (Number.isNaN(when)) fieldError('expires_at', 'must be a date-time');
  if (when <= Date.parse(at)) fieldError('expires_at', 'must be in the future');
  return new Date(when).toISOString();
}

function checkMaxPayments(max: number | null): number | null {
  if (max !== null && (!Number.isSafeInteger(max) || max < 1)) fieldError('max_payments', 'must be a whole number of at least 1, or null for unlimited');
  return max;
}

/** A retried create decides nothing (the id is the idempotency claim's: same merchant, same request). */
function decideCreate(c: CreatePaymentLink, s: PaymentLinkState): PaymentLinkEvent[] {
  if (s.exists) {
    if (s.created!.merchant_id !== c.merchantId) refuse('idempotency_conflict', `payment link ${c.linkId} belongs to another merchant`);
    return [];
  }
  const amount = parseAmount(c.amount, 'amount');
  checkAmountRange(amount, 'amount');
  const data: PaymentLinkCreated = {
    payment_link_id: c.linkId, merchant_id: c.merchantId, amount: formatMoney(amount), currency: checkCurrency(c.currency),
    description: checkDescription(c.description), customer_id: c.customerId, expires_at: checkExpiry(c.expiresAt, c.at),
    max_payments: checkMaxPayments(c.maxPayments), metadata: c.metadata, at: c.at,
  };
  return [{ type: 'payment_link.created', data }];
}

/** The link; another merchant's (when one is named) is not found either. */
function requireLink(s: PaymentLinkState, merchantId?: string): PaymentLinkCreated {
  if (!s.exists || (merchantId !== undefined && s.created!.merchant_id !== merchantId)) refuse('not_found', 'Payment link not found');
  return s.created!;
}

/** Once: deactivating an inactive link again decides nothing (its answer is the link as it is). */
function decideDeactivate(c: { merchantId: string; at: string }, s: PaymentLinkState): PaymentLinkEvent[] {
  const link = requireLink(s, c.merchantId);
  if (s.deactivated_at !== null) return [];
  return [{ type: 'payment_link.deactivated', data: { payment_link_id: link.payment_link_id, at: c.at } }];
}

/**
 * A merchant the operator set inactive collects through none of its links (its keys get 401 too):
 * a payin is refused as if the link were inactive. `merchantStatus` is the merchant's status.
 */
export function requireMerchantCollecting(merchantStatus: string): void {
  if (merchantStatus !== 'active') refuse('payment_link_closed', 'This payment link is inactive', [{ field: 'status', message: 'inactive' }]);
}

/** Refused when every place left is held by a pending payin: retry once one of them has failed. */
const PLACES_HELD = 'every place of this payment link is held by a pending payment';

/**
 * A payin takes a place: refused when the link is closed (`payment_link_closed`, its status in the
 * details) or when the pending payins hold every place left (`payment_link_busy`: retryable). The
 * same payin again decides nothing.
 */
function decideStart(c: { payinId: string; now: Date; at: string }, s: PaymentLinkState): PaymentLinkEvent[] {
  const link = requireLink(s);
  if (s.pending.includes(c.payinId)) return [];
  const status = linkStatus(s, c.now);
  if (status !== 'active') {
    refuse('payment_link_closed', `This payment link is ${status}`, [{ field: 'status', message: status }]);
  }
  if (link.max_payments !== null && s.completed + s.pending.length >= link.max_payments) refuse('payment_link_busy', PLACES_HELD);
  return [{ type: 'payment_link.payment_started', data: { payment_link_id: link.payment_link_id, payin_id: c.payinId, at: c.at } }];
}

/** At least once: only a pending payin of the link ends, once (a redelivered outcome decides nothing). */
function decideEnd(c: { payinId: string; outcome: PaymentOutcome; at: string }, s: PaymentLinkState): PaymentLinkEvent[] {
  const link = requireLink(s);
  if (!s.pending.includes(c.payinId)) return [];
  return [{ type: 'payment_link.payment_ended', data: { payment_link_id: link.payment_link_id, payin_id: c.payinId, outcome: c.outcome, at: c.at } }];
}
