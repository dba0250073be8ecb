// The payin aggregate (stream `payin-<id>`): a collection from a payer, backed by one payin quote.
// created → pending (same append as the create: the collection is handed to the provider gateway)
// → completed | failed, once, from the provider's outcome (the lifecycle payouts share:
// payment-lifecycle.ts). The OTP never enters an event: only whether one was required (the sealed
// OTP waits in the gateway's vault, see workers/provider-gateway.ts). Once completed, its refunds
// claim its refundable amount on this stream (payin-refunds.ts).
import { DomainError } from './errors.ts';
import { unreachable, type CommandDecider } from './decider.ts';
import { operator } from './catalogue.ts';
import type { QuoteCreated } from './quote-pricing.ts';
import { requireAvailable, type OperatorAvailabilities } from './operator-availability.ts';
import { checkParty, type RailParty } from './payment.ts';
import { asQuoted, paymentLifecycle, type PaymentEvent, type PaymentCreated, type PaymentLifecycleCommand, type PaymentState } from './payment-lifecycle.ts';
import { decideRefundOnPayin, evolveRefunds, isPayinRefundEvent, type PayinRefundCommand, type PayinRefundEvent, type RefundClaim } from './payin-refunds.ts';

export interface PayinCreated extends PaymentCreated {
  payin_id: string;
  source: RailParty;
  /** The operator requires a one-time password to collect. */
  otp_required: boolean;
  /** One was given: it waits sealed in the gateway's vault under the payin id (never in an event). */
  otp_supplied: boolean;
  /** The payment link it was paid through (CONTRACT §16); absent on every other payin. */
  payment_link_id?: string;
}

/** The lifecycle's events, and once completed its refunds' claims (payin-refunds.ts). */
export type PayinEvent = PaymentEvent<'payin', PayinCreated> | PayinRefundEvent;
export type PayinState = PaymentState<PayinCreated> & {
  /** Each refund's claim on the payin, in order (payin-refunds.ts). */
  refunds: RefundClaim[];
};

export interface CreatePayin {
  payinId: string;
  merchantId: string;
  customerId: string;
  /** The quote this payin consumes in the same append, as it is when consumed. */
  quote: QuoteCreated;
  source: RailParty;
  /** Whether an OTP was given (the OTP itself never reaches the domain: it is sealed in the vault). */
  otpSupplied: boolean;
  metadata: Record<string, string>;
  /** The quoted operator's availability as read with this create (closed for the flow: refused). */
  availability: OperatorAvailabilities;
  /** Paid through this payment link (its `payment_started` goes in the same append). */
  paymentLinkId?: string;
  at: string;
}

/** What may be asked of a payin, each a plain value. */
export type PayinCommand = { type: 'CreatePayin'; data: CreatePayin } | PaymentLifecycleCommand | PayinRefundCommand;

const lifecycle = paymentLifecycle<'payin', PayinCreated>('payin');

/**
 * The payin's own create rules, on the quote it consumes: the operator must not be closed for
 * payins, the source must match the quote (party check), and an operator that collects with a one-time password needs one.
 */
function decideCreated(c: CreatePayin): PayinCreated {
  const q = c.quote;
  requireAvailable(c.availability, [{ operatorCode: q.operator_code, flow: 'payin', field: 'source.operator_code' }]);
  const source = checkParty(c.source, q, 'source');
  const otpRequired = operator(q.operator_code)!.requiresOtp;
  if (otpRequired && !c.otpSupplied) {
    throw new DomainError('otp_required', `${q.operator_code} requires a one-time password to collect`, [{ field: 'otp', message: 'is required for this operator' }]);
  }
  return {
    payin_id: c.payinId, merchant_id: c.merchantId, customer_id: c.customerId, ...asQuoted(q),
    source, pricing: q.pricing, wallet_impact: q.wallet_impact, metadata: c.metadata, otp_required: otpRequired, otp_supplied: c.otpSupplied, at: c.at,
    // Only on a link's payins: every other payin's event stays as it was.
    ...(c.paymentLinkId === undefined ? {} : { payment_link_id: c.paymentLinkId }),
  };
}

export const payinDecider: CommandDecider<PayinState, PayinEvent, PayinCommand> = {
  initialState: () => ({ ...lifecycle.initialState(), refunds: [] }),
  evolve: (s, e) => (isPayinRefundEvent(e) ? { ...s, refunds: evolveRefunds(s.refunds, e) } : { ...lifecycle.evolve(s, e), refunds: s.refunds }),
  decide(command, state) {
    switch (command.type) {
      case 'CreatePayin': {
        const c = command.data;
        return lifecycle.create(state, { paymentId: c.payinId, merchantId: c.merchantId }, () => decideCreated(c));
      }
      case 'RecordSubmission':
      case 'Settle':
        return lifecycle.decideLifecycle(command, state);
      case 'ClaimRefund':
      case 'SettleRefund':
        return decideRefundOnPayin(command, state);
      default:
        return unreachable(command);
    }
  },
};
