// The payout aggregate (stream `payout-<id>`): a disbursement to a recipient from the merchant's
// wallet, backed by one payout quote. At create, send_amount is held in the wallet (same atomic
// append: quote consumed + payout created + wallet.funds_held, hold id = payout id).
// created → pending → completed (the hold is posted) | failed (the hold is released): the lifecycle
// payins share (payment-lifecycle.ts).
import { unreachable, type CommandDecider } from './decider.ts';
import { passKycGate, type KycGate } from './kyc.ts';
import type { QuoteCreated } from './quote-pricing.ts';
import { requireAvailable, type OperatorAvailabilities } from './operator-availability.ts';
import { checkParty, type Recipient } from './payment.ts';
import { asQuoted, paymentLifecycle, type PaymentEvent, type PaymentCreated, type PaymentLifecycleCommand, type PaymentState } from './payment-lifecycle.ts';

/**
 * A payout's creation: send_amount is debited from the merchant's wallet (held at create), and the
 * recipient gets receive_amount (send_amount − total_fee).
 */
export interface PayoutCreated extends PaymentCreated {
  payout_id: string;
  recipient: Recipient;
  payment_reason_text: string;
  /** The wallet hold made at create (its id). */
  hold_id: string;
}

export type PayoutEvent = PaymentEvent<'payout', PayoutCreated>;
export type PayoutState = PaymentState<PayoutCreated>;

export interface CreatePayout {
  payoutId: string;
  merchantId: string;
  customerId: string;
  /** The quote this payout consumes in the same append, as it is when consumed. */
  quote: QuoteCreated;
  recipient: Recipient;
  paymentReasonText: string;
  metadata: Record<string, string>;
  /** What the KYC gate decides on: the merchant's routing (kyc_required_operators) and the customer's KYC status. */
  kyc: KycGate;
  /** The quoted operator's availability as read with this create (closed for the flow: refused). */
  availability: OperatorAvailabilities;
  at: string;
}

/** What may be asked of a payout, each a plain value. */
export type PayoutCommand = { type: 'CreatePayout'; data: CreatePayout } | PaymentLifecycleCommand;

const lifecycle = paymentLifecycle<'payout', PayoutCreated>('payout');

/**
 * The payout's own create rules, on the quote it consumes: the operator must not be closed for
 * payouts, the recipient must match the quote
 * (party check), and the operator may require the customer's KYC verified (routing
 * kyc_required_operators). The hold of send_amount is the wallet's decision (domain/wallet.ts).
 */
function decideCreated(c: CreatePayout): PayoutCreated {
  const q = c.quote;
  requireAvailable(c.availability, [{ operatorCode: q.operator_code, flow: 'payout', field: 'recipient.operator_code' }]);
  const recipient = checkParty(c.recipient, q, 'recipient');
  passKycGate(c.kyc, q.operator_code);
  return {
    payout_id: c.payoutId, merchant_id: c.merchantId, customer_id: c.customerId, ...asQuoted(q),
    recipient, payment_reason_text: c.paymentReasonText, pricing: q.pricing, wallet_impact: q.wallet_impact,
    metadata: c.metadata, hold_id: c.payoutId, at: c.at,
  };
}

export const payoutDecider: CommandDecider<PayoutState, PayoutEvent, PayoutCommand> = {
  initialState: lifecycle.initialState,
  evolve: lifecycle.evolve,
  decide(command, state) {
    switch (command.type) {
      case 'CreatePayout': {
        const c = command.data;
        return lifecycle.create(state, { paymentId: c.payoutId, merchantId: c.merchantId }, () => decideCreated(c));
      }
      case 'RecordSubmission':
      case 'Settle':
        return lifecycle.decideLifecycle(command, state);
      default:
        return unreachable(command);
    }
  },
};
