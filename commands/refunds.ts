// Merchant commands on refunds (CONTRACT §9), and the commands the provider gateway runs on them
// (commands/leg-owners.ts).
//
// Create: one atomic append over three streams with their expected versions: the payin's claim on
// its refundable amount (payin.refund_claimed), the refund created/pending, and wallet.funds_held
// of the amount (hold id = refund id). Refunds of one payin are serialized on the payin's stream:
// in one process they take turns (transact locks it), across processes the expected version fails
// the later append, which is decided again on the fresh payin. So the non-failed refunds never sum
// to more than send_amount, and the wallet's hold never takes available below zero.
// Outcome: completed → refund.completed + payin.refund_settled + wallet.hold_posted (to the
// operator, no fee); failed → refund.failed + payin.refund_settled (the claim given back) +
// wallet.hold_released; each triple in one append, decided only while the refund is pending.
import type { Services } from './services.ts';
import * as P from '../domain/payin.ts';
import * as R from '../domain/refund.ts';
import * as W from '../domain/wallet.ts';
import { invariant, refuse } from '../domain/errors.ts';
import type { Money } from '../domain/money.ts';
import type { LegOutcome } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import type { LegOwner } from './legs.ts';
import { readAvailabilities } from './operator-availability.ts';

export interface CreateRefund {
  refundId: string;
  merchantId: string;
  payinId: string;
  /** Undefined: what is left to refund. */
  amount: Money | undefined;
  reason: string | null;
  metadata: Record<string, string>;
  /** The id was drawn by this request's idempotency claim (no take-over): the refund cannot exist yet. */
  fresh?: boolean;
}

/** The payin's merchant and currency never change: which wallet to lock. Unknown or another merchant's: payin_not_found. */
async function payinOf(s: Services, merchantId: string, payinId: string): Promise<P.PayinCreated> {
  const { state } = await s.aggregates.peek(streams.payin(payinId), P.payinDecider);
  if (!state.exists || state.created!.merchant_id !== merchantId) {
    refuse('payin_not_found', 'Payin not found', [{ field: 'payin_id', message: 'no such payin' }]);
  }
  return state.created!;
}

export async function createRefund(s: Services, c: CreateRefund, meta: EventMetadata): Promise<Created<R.RefundState>> {
  const refundStream = streams.refund(c.refundId);
  const payinStream = streams.payin(c.payinId);
  const earlier = await createdEarlier(s.aggregates, refundStream, R.refundDecider, c.fresh);
  if (earlier) return earlier;
  const d = await payinOf(s, c.merchantId, c.payinId);
  const walletStream = streams.wallet(c.merchantId, d.send_currency);
  const { result, append } = await s.aggregates.transact([payinStream, refundStream, walletStream], async (tx) => {
    const at = s.clock.now().toISOString();
    const refund = await tx.load(refundStream, R.refundDecider);
    if (refund.state.exists) return { appends: [], result: existing(refund.state) };
    const payin = await tx.load(payinStream, P.payinDecider);
    const claimed = P.payinDecider.decide({ type: 'ClaimRefund', data: { refundId: c.refundId, merchantId: c.merchantId, amount: c.amount, at } }, payin.state);
    const claim = claimed.find((e) => e.type === 'payin.refund_claimed');
    invariant(claim, `refund ${c.refundId}: a new refund is claimed on its payin`);
    const amount = BigInt(claim.data.amount);
    const events = R.refundDecider.decide({
      type: 'CreateRefund',
      data: {
        refundId: c.refundId, merchantId: c.merchantId, payinId: c.payinId, amount, currency: d.send_currency, recipient: d.source,
        operatorCode: d.operator_code, reason: c.reason, metadata: c.metadata, availability: await readAvailabilities(tx, [d.operator_code]), at,
      },
    }, refund.state);
    // The hold is the wallet's decision (insufficient_balance: nothing is appended, the payin unclaimed).
    const wallet = await tx.load(walletStream, W.walletDecider);
    const held = W.hold(wallet.state, {
      merchantId: c.merchantId, currency: d.send_currency, at, holdId: c.refundId, amount, reference: { type: 'refund', id: c.refundId },
    });
    return {
      appends: [
        { streamId: payinStream, expectedVersion: payin.version, events: toNew(claimed, meta) },
        { streamId: refundStream, expectedVersion: refund.version, events: toNew(events, meta) },
        { streamId: walletStream, expectedVersion: wallet.version, events: toNew(held, meta) },
      ],
      result: created(events.reduce(R.refundDecider.evolve, refund.state)),
    };
  });
  await s.awaitReadModels(append?.position);
  return result;
}

/** The provider accepted the refund under `providerReference` (recorded once). */
export async function recordRefundSubmission(s: Services, refundId: string, providerReference: string, meta: EventMetadata): Promise<void> {
  await s.aggregates.execute(streams.refund(refundId), R.refundDecider,
    (): R.RefundCommand => ({ type: 'RecordSubmission', data: { providerReference, at: s.clock.now().toISOString() } }), meta);
}

/**
 * The refund's outcome, in one append with the payin's claim settled and the wallet's hold posted
 * (completed) or released (failed). Decided only while the refund is pending: a replay appends nothing.
 */
export async function settleRefund(s: Services, refundId: string, outcome: LegOutcome, meta: EventMetadata): Promise<bigint | undefined> {
  const refundStream = streams.refund(refundId);
  const first = await s.aggregates.peek(refundStream, R.refundDecider);
  invariant(first.state.exists, `outcome for unknown refund ${refundId}`);
  const d = first.state.created!;
  const payinStream = streams.payin(d.payin_id);
  const walletStream = streams.wallet(d.merchant_id, d.currency);
  const { append } = await s.aggregates.transact([refundStream, payinStream, walletStream], async (tx) => {
    const at = s.clock.now().toISOString();
    const refund = await tx.load(refundStream, R.refundDecider);
    const events = R.refundDecider.decide({ type: 'Settle', data: { ...outcome, at } }, refund.state);
    if (events.length === 0) return { appends: [], result: undefined };
    const completed = events.some((e) => e.type === 'refund.completed');
    const payin = await tx.load(payinStream, P.payinDecider);
    const settled = P.payinDecider.decide({ type: 'SettleRefund', data: { refundId, outcome: completed ? 'completed' : 'failed', at } }, payin.state);
    const wallet = await tx.load(walletStream, W.walletDecider);
    const target = { merchantId: d.merchant_id, currency: d.currency, at, holdId: d.hold_id };
    const moved = completed
      ? W.postHold(wallet.state, { ...target, fee: 0n, operatorCode: d.operator_code })
      : W.releaseHold(wallet.state, { ...target, reason: outcome.outcome === 'failed' ? outcome.reason : null });
    return {
      appends: [
        { streamId: refundStream, expectedVersion: refund.version, events: toNew(events, meta) },
        { streamId: payinStream, expectedVersion: payin.version, events: toNew(settled, meta) },
        { streamId: walletStream, expectedVersion: wallet.version, events: toNew(moved, meta) },
      ],
      result: undefined,
    };
  });
  return append?.position;
}

/** A refund's leg: reference = refund id; the payin's payer is paid the amount back (kind `refund`: the sandbox settles it by amount). */
export const refundLegOwner: LegOwner = {
  name: 'refund',
  triggers: {
    'refund.created': (e) => {
      const d = e.data as unknown as R.RefundCreated;
      return {
        owner: 'refund', reference: d.refund_id, kind: 'refund', operatorCode: d.operator_code, phone: d.recipient.phone!,
        amount: BigInt(d.amount), currency: d.currency, otp: false, paymentId: d.refund_id,
        // The payin's leg reference is the payin's id (leg-owners.ts): the refund goes back through its provider.
        refundOf: d.payin_id,
      };
    },
  },
  async isOpen(s, reference) {
    return s.aggregates.yesFromCache(streams.refund(reference), R.refundDecider, (st) => st.exists && st.status === 'pending'); // see legs.ts isOpen
  },
  submitted: (s, reference, providerReference, meta) => recordRefundSubmission(s, reference, providerReference, meta),
  settled: (s, reference, outcome, meta) => settleRefund(s, reference, outcome, meta),
};
