// Merchant commands on transfers and the transfer's side of the provider gateway.
//
// Create: one atomic append over three streams: quote consumed, transfer created (pending), and the
// payout amount held in the payout currency (hold id = the first disbursement's reference). Short
// of balance → 400 insufficient_balance, nothing appended, quote still active.
// The saga (workers/transfer-saga.ts) starts the collection; the gateway runs each leg and reports
// here (transferLegOwner). Every outcome is appended with its wallet effect in one append:
//   collection completed → transfer.payin.completed + payout attempt 1 started; wallet credited
//                          (payin_amount − total_fee) in the payin currency;
//   collection failed    → transfer.payin.failed + transfer.failed; the hold released;
//   disbursement done    → transfer.payout.completed + transfer.completed; the hold posted;
//   disbursement failed  → transfer.payout.failed + transfer.failed; the hold released.
// Relaunch holds the (new) payout amount again and starts attempt n+1; the payer is never collected
// again (the collection reference is fixed and its leg already settled).
import type { Services } from './services.ts';
import * as T from '../domain/transfer.ts';
import * as Q from '../domain/quote.ts';
import * as W from '../domain/wallet.ts';
import { DomainError, invariant } from '../domain/errors.ts';
import { operator } from '../domain/catalogue.ts';
import { checkParty, type LegOutcome, type RailParty, type Recipient } from '../domain/payment.ts';
import { checkAmountRange, parseAmount } from '../domain/money.ts';
import type { EventMetadata, StreamAppend } from '../infra/eventstore/types.ts';
import type { LegOwner } from './legs.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { requireCustomer } from './lookups.ts';
import { requireKyc } from './kyc.ts';
import { created, existing, type Created } from './created.ts';
import { withSealedOtp } from './sealed-otp.ts';

export interface CreateTransfer {
  transferId: string;
  merchantId: string;
  customerId: string;
  quoteId: string;
  payer: RailParty;
  recipient: Recipient;
  otp: string | undefined;
  paymentReasonCode: string | null;
  senderSourceOfFunds: string | null;
  senderOccupation: string | null;
  metadata: Record<string, string>;
  /** The id was drawn by this request's idempotency claim (no take-over): the resource cannot exist yet. */
  fresh?: boolean;
}

const partyOf = (operatorCode: string) => {
  const o = operator(operatorCode)!;
  return { country_code: o.country, operator_code: o.code, rail_type: o.railType };
};

export async function createTransfer(s: Services, c: CreateTransfer, meta: EventMetadata): Promise<Created<T.TransferState>> {
  const transferStream = streams.transfer(c.transferId);
  const quoteStream = streams.quote(c.quoteId);
  if (c.fresh) s.aggregates.assumeNew(transferStream, T.transferDecider);
  else {
    const found = await s.aggregates.load(transferStream, T.transferDecider);
    if (found.state.exists) return existing(found.state); // a retry that took over the claim
  }
  await requireCustomer(s, c.merchantId, c.customerId);
  const peek = await s.aggregates.peek(quoteStream, Q.quoteDecider);
  if (!peek.state.exists || peek.state.quote!.merchant_id !== c.merchantId) {
    throw new DomainError('quote_not_found', 'Quote not found', [{ field: 'quote_id', message: 'no such quote for this merchant' }]);
  }
  if (peek.state.quote!.flow_type !== 'transfer') {
    throw new DomainError('quote_mismatch', `This is a ${peek.state.quote!.flow_type} quote, not a transfer quote`, [{ field: 'quote_id', message: 'must be a transfer quote' }]);
  }
  const payoutCurrency = peek.state.quote!.payout_currency!;
  const walletStream = streams.wallet(c.merchantId, payoutCurrency);
  return withSealedOtp(s, T.collectionReference(c.transferId), c.otp, async (seal) => {
    const { result, append } = await s.aggregates.transact([quoteStream, transferStream, walletStream], async (tx) => {
      const now = s.clock.now();
      const at = now.toISOString();
      const quote = await tx.load(quoteStream, Q.quoteDecider);
      const transfer = await tx.load(transferStream, T.transferDecider);
      if (transfer.state.exists) return { appends: [], result: existing(transfer.state) };
      const consumed = Q.consume(quote.state, { merchantId: c.merchantId, flow: 'transfer', paymentId: c.transferId, customerId: c.customerId, now, at });
      const q = quote.state.quote!;
      const payer = checkParty(c.payer, partyOf(q.payer_operator_code!), 'payer');
      const recipient = checkParty(c.recipient, partyOf(q.recipient_operator_code!), 'recipient');
      // The disbursing operator may require the customer's KYC verified (routing kyc_required_operators).
      await requireKyc(s, c.merchantId, c.customerId, q.recipient_operator_code!);
      const otpRequired = operator(q.payer_operator_code!)!.requiresOtp;
      if (otpRequired && c.otp === undefined) {
        throw new DomainError('otp_required', `${q.payer_operator_code} requires a one-time password to collect`, [{ field: 'otp', message: 'is required for this operator' }]);
      }
      const wallet = await tx.load(walletStream, W.walletDecider);
      const held = W.hold(wallet.state, {
        merchantId: c.merchantId, currency: payoutCurrency, at, holdId: T.payoutReference(c.transferId, 1),
        amount: BigInt(q.payout_amount!), reference: { type: 'transfer', id: c.transferId },
      });
      const events = T.create(transfer.state, {
        transfer_id: c.transferId, merchant_id: c.merchantId, customer_id: c.customerId, quote_id: c.quoteId,
        payin_amount: q.payin_amount!, payin_currency: q.payin_currency!, payout_amount: q.payout_amount!, payout_currency: payoutCurrency,
        total_fee: q.total_fee, corridor_code: q.corridor_code!, corridor_type: q.corridor_type!,
        payer_operator_code: q.payer_operator_code!, recipient_operator_code: q.recipient_operator_code!,
        payer, recipient, pricing: q.pricing as unknown as Record<string, unknown>, wallet_impact: q.wallet_impact,
        payment_reason_code: c.paymentReasonCode, sender_source_of_funds: c.senderSourceOfFunds, sender_occupation: c.senderOccupation,
        metadata: c.metadata, otp_required: otpRequired, otp_supplied: c.otp !== undefined, at,
      });
      // Sealed before the append: the collection may start as soon as the transfer exists.
      await seal();
      return {
        appends: [
          { streamId: quoteStream, expectedVersion: quote.version, events: toNew(consumed, meta) },
          { streamId: transferStream, expectedVersion: transfer.version, events: toNew(events, meta) },
          { streamId: walletStream, expectedVersion: wallet.version, events: toNew(held, meta) },
        ],
        result: created(events.reduce(T.transferDecider.evolve, transfer.state)),
      };
    });
    await s.awaitReadModels(append?.position);
    return result;
  });
}

/** Runs one decision on a transfer stream alone (saga steps, submissions). */
async function onTransfer(s: Services, transferId: string, decide: (st: T.TransferState, at: string) => T.TransferEvent[], meta: EventMetadata) {
  const streamId = streams.transfer(transferId);
  return s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, T.transferDecider);
    const events = decide(loaded.state, s.clock.now().toISOString());
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: undefined };
  });
}

/** Saga step: the transfer exists → its collection starts (once, whatever the redeliveries). */
export async function startCollection(s: Services, transferId: string, meta: EventMetadata): Promise<void> {
  await onTransfer(s, transferId, (st, at) => T.startCollection(st, { at }), meta);
}

type LegRef = { transferId: string; leg: 'collection' } | { transferId: string; leg: 'payout'; attempt: number };

export function parseLegReference(reference: string): LegRef | undefined {
  const m = /^transfer:([0-9a-f-]{36}):(collection|payout:([0-9]+))$/.exec(reference);
  if (!m) return undefined;
  return m[2] === 'collection' ? { transferId: m[1]!, leg: 'collection' } : { transferId: m[1]!, leg: 'payout', attempt: Number(m[3]) };
}

/**
 * A leg's outcome with its wallet effects, in one append. The payin and payout currencies may be
 * the same wallet stream: effects on one currency are decided one after the other on its state.
 */
export async function settleTransferLeg(s: Services, reference: string, outcome: LegOutcome, meta: EventMetadata): Promise<bigint | undefined> {
  const ref = parseLegReference(reference);
  invariant(ref, `not a transfer leg reference: ${reference}`);
  const transferStream = streams.transfer(ref.transferId);
  // Only what never changes (merchant, currencies: which wallets to lock); the outcome is decided in transact.
  const first = await s.aggregates.peek(transferStream, T.transferDecider);
  invariant(first.state.exists, `outcome for unknown transfer ${ref.transferId}`);
  const t = first.state.created!;
  const walletStreams = [...new Set([streams.wallet(t.merchant_id, t.payin_currency), streams.wallet(t.merchant_id, t.payout_currency)])];
  const { append } = await s.aggregates.transact([transferStream, ...walletStreams], async (tx) => {
    const at = s.clock.now().toISOString();
    const transfer = await tx.load(transferStream, T.transferDecider);
    const settled = { outcome: outcome.outcome, providerReference: outcome.providerReference, ...(outcome.outcome === 'failed' ? { reason: outcome.reason } : {}), at };
    const events = ref.leg === 'collection'
      ? T.collectionSettled(transfer.state, settled)
      : T.payoutSettled(transfer.state, { ...settled, attempt: ref.attempt });
    const wallets = new Map<string, { version: number; state: W.WalletState; events: W.WalletEvent[] }>();
    const walletFor = async (currency: string) => {
      const id = streams.wallet(t.merchant_id, currency);
      if (!wallets.has(id)) {
        const loaded = await tx.load(id, W.walletDecider);
        wallets.set(id, { version: loaded.version, state: loaded.state, events: [] });
      }
      return wallets.get(id)!;
    };
    const apply = async (currency: string, decide: (w: W.WalletState) => W.WalletEvent[]) => {
      const w = await walletFor(currency);
      const decided = decide(w.state);
      w.events.push(...decided);
      w.state = decided.reduce(W.walletDecider.evolve, w.state);
    };
    const target = (currency: string) => ({ merchantId: t.merchant_id, currency, at });
    for (const e of events) {
      if (e.type === 'transfer.payin.completed') {
        await apply(t.payin_currency, (w) => W.creditCollection(w, {
          ...target(t.payin_currency), creditId: T.collectionReference(t.transfer_id), gross: BigInt(t.payin_amount),
          fee: BigInt(t.total_fee), operatorCode: t.payer_operator_code, reference: { type: 'transfer', id: t.transfer_id },
        }));
      } else if (e.type === 'transfer.payin.failed') {
        await apply(t.payout_currency, (w) => W.releaseHold(w, { ...target(t.payout_currency), holdId: T.payoutReference(t.transfer_id, 1), reason: e.data.reason }));
      } else if (e.type === 'transfer.payout.completed') {
        const attempt = transfer.state.attempts.find((a) => a.attempt === e.data.attempt)!;
        await apply(t.payout_currency, (w) => W.postHold(w, {
          ...target(t.payout_currency), holdId: attempt.leg_reference, fee: 0n, operatorCode: String(attempt.recipient.operator_code),
        }));
      } else if (e.type === 'transfer.payout.failed') {
        const attempt = transfer.state.attempts.find((a) => a.attempt === e.data.attempt)!;
        await apply(t.payout_currency, (w) => W.releaseHold(w, { ...target(t.payout_currency), holdId: attempt.leg_reference, reason: e.data.reason }));
      }
    }
    const appends: StreamAppend[] = [{ streamId: transferStream, expectedVersion: transfer.version, events: toNew(events, meta) }];
    for (const [streamId, w] of wallets) appends.push({ streamId, expectedVersion: w.version, events: toNew(w.events, meta) });
    return { appends, result: undefined };
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
        amount: BigInt(d.amount), currency: d.currency, otp: d.otp,
      };
    },
    'transfer.payout.started': (e) => {
      const d = e.data as Extract<T.TransferEvent, { type: 'transfer.payout.started' }>['data'];
      return {
        owner: 'transfer', reference: d.leg_reference, kind: 'disbursement', operatorCode: String(d.recipient.operator_code),
        phone: String(d.recipient.phone), amount: BigInt(d.amount), currency: d.currency, otp: false,
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
    const ref = parseLegReference(reference);
    invariant(ref, `not a transfer leg reference: ${reference}`);
    await onTransfer(s, ref.transferId, (st, at) => ref.leg === 'collection'
      ? T.collectionSubmitted(st, { providerReference, at })
      : T.payoutSubmitted(st, { attempt: ref.attempt, providerReference, at }), meta);
  },
  settled: (s, reference, outcome, meta) => settleTransferLeg(s, reference, outcome, meta),
};

export interface Relaunch {
  transferId: string;
  merchantId: string;
  payoutAmount: string | undefined;
  recipient: Recipient | undefined;
  /** The request's idempotency claim id: a retry of a relaunch that was appended answers it, not a refusal. */
  relaunchId: string | undefined;
}

/** POST /transfers/{id}/relaunch-payout: a new disbursement attempt with the amount held again. */
export async function relaunchPayout(s: Services, c: Relaunch, meta: EventMetadata): Promise<Created<T.TransferState>> {
  const transferStream = streams.transfer(c.transferId);
  const first = await s.aggregates.load(transferStream, T.transferDecider);
  if (!first.state.exists || first.state.created!.merchant_id !== c.merchantId) throw new DomainError('not_found', 'Transfer not found');
  const t = first.state.created!;
  let amount: string | undefined;
  if (c.payoutAmount !== undefined) {
    const parsed = parseAmount(c.payoutAmount, 'payout_amount');
    checkAmountRange(parsed, 'payout_amount');
    amount = parsed.toString();
  }
  const recipient = c.recipient === undefined ? undefined : checkParty(c.recipient, partyOf(t.recipient_operator_code), 'recipient');
  const walletStream = streams.wallet(c.merchantId, t.payout_currency);
  const { result, append } = await s.aggregates.transact([transferStream, walletStream], async (tx) => {
    const at = s.clock.now().toISOString();
    const transfer = await tx.load(transferStream, T.transferDecider);
    const events = T.relaunchPayout(transfer.state, {
      ...(amount ? { payoutAmount: amount } : {}), ...(recipient ? { recipient } : {}), ...(c.relaunchId ? { relaunchId: c.relaunchId } : {}), at,
    });
    if (events.length === 0) return { appends: [], result: existing(transfer.state) }; // this request's relaunch, done before
    const started = events.find((e) => e.type === 'transfer.payout.started') as Extract<T.TransferEvent, { type: 'transfer.payout.started' }>;
    const wallet = await tx.load(walletStream, W.walletDecider);
    const held = W.hold(wallet.state, {
      merchantId: c.merchantId, currency: t.payout_currency, at, holdId: started.data.leg_reference,
      amount: BigInt(started.data.amount), reference: { type: 'transfer', id: c.transferId },
    });
    return {
      appends: [
        { streamId: transferStream, expectedVersion: transfer.version, events: toNew(events, meta) },
        { streamId: walletStream, expectedVersion: wallet.version, events: toNew(held, meta) },
      ],
      result: created(events.reduce(T.transferDecider.evolve, transfer.state)),
    };
  });
  await s.awaitReadModels(append?.position);
  return result;
}
