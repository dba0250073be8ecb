// The transfer's side of the provider gateway (commands/legs.ts): which events start a leg, whether a
// leg still awaits its outcome, and its submission and outcome recorded. Every outcome is appended
// with its wallet effect in one append (domain/transfer-wallets.ts):
//   collection completed → transfer.payin.completed + payout attempt 1 started; wallet credited
//                          (payin_amount − total_fee) in the payin currency;
//   collection failed    → transfer.payin.failed + transfer.failed; the hold released;
//   disbursement done    → transfer.payout.completed + transfer.completed; the hold posted;
//   disbursement failed  → transfer.payout.failed + transfer.failed; the hold released.
import type { Services } from './services.ts';
import * as T from '../domain/transfer.ts';
import { invariant } from '../domain/errors.ts';
import type { LegOutcome } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { LegOwner } from './legs.ts';
import { streams } from './streams.ts';
import { withWalletEffects } from './transfer-wallets.ts';

type LegRef = { transferId: string; leg: 'collection' } | { transferId: string; leg: 'payout'; attempt: number };

function parseLegReference(reference: string): LegRef | undefined {
  const m = /^transfer:([0-9a-f-]{36}):(collection|payout:([0-9]+))$/.exec(reference);
  if (!m) return undefined;
  return m[2] === 'collection' ? { transferId: m[1]!, leg: 'collection' } : { transferId: m[1]!, leg: 'payout', attempt: Number(m[3]) };
}

function legReference(reference: string): LegRef {
  const ref = parseLegReference(reference);
  invariant(ref, `not a transfer leg reference: ${reference}`);
  return ref;
}

/** The provider accepted the leg under `providerReference` (recorded once). */
function submissionCommand(ref: LegRef, providerReference: string, at: string): T.TransferCommand {
  return ref.leg === 'collection'
    ? { type: 'RecordCollectionSubmission', data: { providerReference, at } }
    : { type: 'RecordPayoutSubmission', data: { attempt: ref.attempt, providerReference, at } };
}

function settlementCommand(ref: LegRef, outcome: LegOutcome, at: string): T.TransferCommand {
  const settled = { ...outcome, at };
  return ref.leg === 'collection' ? { type: 'SettleCollection', data: settled } : { type: 'SettlePayout', data: { ...settled, attempt: ref.attempt } };
}

/**
 * A leg's outcome with its wallet effects, in one append. The payin and payout currencies may be
 * the same wallet stream: effects on one currency are decided one after the other on its state.
 */
async function settleTransferLeg(s: Services, reference: string, outcome: LegOutcome, meta: EventMetadata): Promise<bigint | undefined> {
  const ref = legReference(reference);
  const transferStream = streams.transfer(ref.transferId);
  // Only what never changes (merchant, currencies: which wallets to lock); the outcome is decided in transact.
  const first = await s.aggregates.peek(transferStream, T.transferDecider);
  invariant(first.state.exists, `outcome for unknown transfer ${ref.transferId}`);
  const t = first.state.created!;
  const walletStreams = [...new Set([streams.wallet(t.merchant_id, t.payin_currency), streams.wallet(t.merchant_id, t.payout_currency)])];
  const { append } = await s.aggregates.transact([transferStream, ...walletStreams], async (tx) => {
    const transfer = await tx.load(transferStream, T.transferDecider);
    const events = T.transferDecider.decide(settlementCommand(ref, outcome, s.clock.now().toISOString()), transfer.state);
    return { appends: await withWalletEffects(tx, transfer, events, meta), result: undefined };
  });
  return append?.position;
}

export const transferLegOwner: LegOwner = {
  name: 'transfer',
  triggers: {
    'transfer.collection_started': (e) => {
      const d = e.data as Extract<T.TransferEvent, { type: 'transfer.collection_started' }>['data'];
      return {
        owner: 'transfer', reference: d.leg_reference, kind: 'collection', operatorCode: d.operator_code, phone: d.phone,
        amount: BigInt(d.amount), currency: d.currency, otp: d.otp, paymentId: legReference(d.leg_reference).transferId,
      };
    },
    'transfer.payout.started': (e) => {
      const d = e.data as Extract<T.TransferEvent, { type: 'transfer.payout.started' }>['data'];
      return {
        owner: 'transfer', reference: d.leg_reference, kind: 'disbursement', operatorCode: String(d.recipient.operator_code),
        phone: String(d.recipient.phone), amount: BigInt(d.amount), currency: d.currency, otp: false,
        paymentId: legReference(d.leg_reference).transferId,
      };
    },
  },
  async isOpen(s, reference) {
    const ref = parseLegReference(reference);
    if (!ref) return false;
    // See legs.ts isOpen: a cached state may not have this disbursement attempt yet.
    return s.aggregates.yesFromCache(streams.transfer(ref.transferId), T.transferDecider, (state) => {
      if (!state.exists) return false;
      if (ref.leg === 'collection') return state.payin_status === 'pending';
      return state.attempts.some((a) => a.attempt === ref.attempt && a.status === 'pending');
    });
  },
  async submitted(s, reference, providerReference, meta) {
    const ref = legReference(reference);
    await s.aggregates.execute(streams.transfer(ref.transferId), T.transferDecider, () => submissionCommand(ref, providerReference, s.clock.now().toISOString()), meta);
  },
  settled: (s, reference, outcome, meta) => settleTransferLeg(s, reference, outcome, meta),
};
