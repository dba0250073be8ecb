// The quote aggregate (stream `quote-<id>`): a short-lived lock of routing, fees, FX and amounts
// (priced in quote-pricing.ts). Each quote backs at most one payment: `quote.consumed` is appended
// in the same atomic append as the payment's creation, with the quote's expected version, so two
// payments can never share one.
import { invariant, refuse } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import type { Flow } from './catalogue.ts';
import { priceQuote, type CreateQuote, type QuoteCreated } from './quote-pricing.ts';

// For the transfer aggregate and its spec, which import them from here (to be retired: import quote-pricing.ts).
export type QuoteStatus = 'active' | 'expired' | 'consumed';

interface QuoteConsumed {
  payment_type: 'payin' | 'payout' | 'transfer';
  payment_id: string;
  at: string;
}

export type QuoteEvent =
  | DomainEvent<'quote.created', QuoteCreated>
  | DomainEvent<'quote.consumed', QuoteConsumed>;

export interface QuoteState {
  exists: boolean;
  quote: QuoteCreated | null;
  consumed: QuoteConsumed | null;
}

/** active until used or past expires_at (computed at read time: time passing appends nothing). */
export function quoteStatus(s: QuoteState, now: Date): QuoteStatus {
  invariant(s.quote, 'status of a quote that does not exist');
  if (s.consumed) return 'consumed';
  return now.getTime() >= Date.parse(s.quote.expires_at) ? 'expired' : 'active';
}

// ---- using a quote ----

/** The merchant's quote: another merchant's quote gets the same answer as none, `quote_not_found`. */
export function quoteFor(s: QuoteState, merchantId: string): QuoteCreated {
  if (!s.exists || s.quote!.merchant_id !== merchantId) refuse('quote_not_found', 'Quote not found', [{ field: 'quote_id', message: 'no such quote for this merchant' }]);
  return s.quote!;
}

export interface Consume {
  merchantId: string;
  flow: Flow;
  paymentId: string;
  customerId: string;
  now: Date;
  at: string;
}

/**
 * Marks the quote used by a payment. Refusals (CONTRACT.md §5): another merchant's quote or none →
 * `quote_not_found` (the same answer); a quote for another flow or another customer →
 * `quote_mismatch`; already used → `quote_not_active`; past expires_at → `quote_expired`. The same
 * payment again (a retry): nothing.
 */
function consume(s: QuoteState, c: Consume): QuoteEvent[] {
  const q = quoteFor(s, c.merchantId);
  if (s.consumed?.payment_id === c.paymentId) return [];
  if (q.flow_type !== c.flow) refuse('quote_mismatch', `This is a ${q.flow_type} quote, not a ${c.flow} quote`, [{ field: 'quote_id', message: `must be a ${c.flow} quote` }]);
  const status = quoteStatus(s, c.now);
  if (status === 'consumed') refuse('quote_not_active', 'The quote has already been used', [{ field: 'quote_id', message: 'is consumed' }]);
  if (status === 'expired') refuse('quote_expired', 'The quote has expired', [{ field: 'quote_id', message: `expired at ${q.expires_at}` }]);
  if (q.customer_id !== null && q.customer_id !== c.customerId) {
    refuse('quote_mismatch', 'The quote was made for another customer', [{ field: 'customer_id', message: 'must be the customer of the quote' }]);
  }
  return [{ type: 'quote.consumed', data: { payment_type: c.flow, payment_id: c.paymentId, at: c.at } }];
}

// ---- the decider ----

/** What may be asked of a quote, each a plain value: price it (create), or use it for a payment. */
export type QuoteCommand =
  | { type: 'CreateQuote'; data: CreateQuote }
  | { type: 'ConsumeQuote'; data: Consume };

export const quoteDecider: CommandDecider<QuoteState, QuoteEvent, QuoteCommand> = {
  initialState: (): QuoteState => ({ exists: false, quote: null, consumed: null }),
  evolve(s: QuoteState, e: QuoteEvent): QuoteState {
    switch (e.type) {
      case 'quote.created':
        return { ...s, exists: true, quote: e.data };
      case 'quote.consumed':
        return { ...s, consumed: e.data };
      default:
        return unreachable(e);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateQuote':
        if (state.exists) return []; // the same create retried under its idempotency key
        return [{ type: 'quote.created', data: priceQuote(command.data) }];
      case 'ConsumeQuote':
        return consume(state, command.data);
      default:
        return unreachable(command);
    }
  },
};
