// The refund aggregate (stream `refund-<id>`): money of a completed payin given back to the party
// it was collected from (CONTRACT §9). No quote of its own: the payin's quote locked its terms.
// At create, in one atomic append: the payin records the refund's claim on its refundable amount
// (payin-refunds.ts), the refund is created → pending (handed to the provider gateway), and the
// wallet holds the amount (hold id = refund id). Then completed (the hold is posted to the
// operator) | failed (released, and the payin's claim given back): the lifecycle payins and
// payouts share (payment-lifecycle.ts).
import { unreachable, type CommandDecider } from './decider.ts';
import type { RailParty } from './payment.ts';
import type { Money } from './money.ts';
import { formatMoney } from './money.ts';
import { requireAvailable, type OperatorAvailabilities } from './operator-availability.ts';
import { paymentLifecycle, type PaymentEvent, type PaymentLifecycleCommand, type PaymentState } from './payment-lifecycle.ts';

export interface RefundCreated {
  refund_id: string;
  merchant_id: string;
  payin_id: string;
  /** Whole francs, decimal string: what goes back to the payer, and what the wallet holds. */
  amount: string;
  currency: string;
  /** The payin's source: who gets the money back. */
  recipient: RailParty;
  /** The payin's operator: the provider pays the refund and is paid by the wallet's hold. */
  operator_code: string;
  reason: string | null;
  metadata: Record<string, string>;
  /** The wallet hold made at create (its id). */
  hold_id: string;
  at: string;
}

export type RefundEvent = PaymentEvent<'refund', RefundCreated>;
export type RefundState = PaymentState<RefundCreated>;

export interface CreateRefund {
  refundId: string;
  merchantId: string;
  payinId: string;
  /** As claimed on the payin (payin-refunds.ts): the amount asked, or what was left. */
  amount: Money;
  currency: string;
  recipient: RailParty;
  operatorCode: string;
  reason: string | null;
  metadata: Record<string, string>;
  /** The payin operator's availability as read with this create: a refund is a disbursement (CONTRACT §17). */
  availability: OperatorAvailabilities;
  at: string;
}

export type RefundCommand = { type: 'CreateRefund'; data: CreateRefund } | PaymentLifecycleCommand;

const lifecycle = paymentLifecycle<'refund', RefundCreated>('refund');

export const refundDecider: CommandDecider<RefundState, RefundEvent, RefundCommand> = {
  initialState: lifecycle.initialState,
  evolve: lifecycle.evolve,
  decide(command, state) {
    switch (command.type) {
      case 'CreateRefund': {
        const c = command.data;
        if (!state.exists) requireAvailable(c.availability, [{ operatorCode: c.operatorCode, flow: 'payout', field: 'payin_id' }]);
        return lifecycle.create(state, { paymentId: c.refundId, merchantId: c.merchantId }, () => ({
          refund_id: c.refundId, merchant_id: c.merchantId, payin_id: c.payinId, amount: formatMoney(c.amount), currency: c.currency,
          recipient: c.recipient, operator_code: c.operatorCode, reason: c.reason, metadata: c.metadata, hold_id: c.refundId, at: c.at,
        }));
      }
      case 'RecordSubmission':
      case 'Settle':
        return lifecycle.decideLifecycle(command, state);
      default:
        return unreachable(command);
    }
  },
};
