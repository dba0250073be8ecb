// Merchant commands on transfers, and the saga's step that starts a transfer's collection. The rules
// are the deciders' (domain/transfer.ts, domain/wallet.ts); here: load, decide, append.
//
// Create: one atomic append over three streams: quote consumed, transfer created (pending), and the
// payout amount held in the payout currency (hold id = the first disbursement's reference). Short
// of balance → 400 insufficient_balance, nothing appended, quote still active.
// The collection starts in the create's own decision (the saga, workers/transfer-saga.ts, starts it
// for a transfer created without it); the gateway runs each leg and reports its outcome to
// commands/transfer-legs.ts (transferLegOwner).
// Relaunch holds the (new) payout amount again and starts attempt n+1; the payer is never collected
// again (the collection reference is fixed and its leg already settled).
import type { Services } from './services.ts';
import * as T from '../domain/transfer.ts';
import * as Q from '../domain/quote.ts';
import type { RailParty, Recipient } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew, type AttemptLoader } from './aggregates.ts';
import { streams } from './streams.ts';
import { customerReader, kycGate, readMerchant, requireCustomer } from './lookups.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import { withSealedOtp } from './sealed-otp.ts';
import { withWalletEffects } from './transfer-wallets.ts';
import { readAvailabilities } from './operator-availability.ts';

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

export async function createTransfer(s: Services, c: CreateTransfer, meta: EventMetadata): Promise<Created<T.TransferState>> {
  const transferStream = streams.transfer(c.transferId);
  const quoteStream = streams.quote(c.quoteId);
  const earlier = await createdEarlier(s.aggregates, transferStream, T.transferDecider, c.fresh);
  if (earlier) return earlier;
  await requireCustomer(s, c.merchantId, c.customerId);
  const peek = await s.aggregates.peek(quoteStream, Q.quoteDecider);
  const walletStream = streams.wallet(c.merchantId, T.transferQuote(peek.state, c.merchantId).payout_currency!);
  return withSealedOtp(s, T.collectionReference(c.transferId), c.otp, async (seal) => {
    const { result, append } = await s.aggregates.transact([quoteStream, transferStream, walletStream], (tx) => decideCreate(s, tx, c, seal, meta));
    await s.awaitReadModels(append?.position);
    return result;
  });
}

/** One attempt at a create: the quote consumed, the transfer created and its payout amount held. */
async function decideCreate(s: Services, tx: AttemptLoader, c: CreateTransfer, seal: () => Promise<void>, meta: EventMetadata) {
  const now = s.clock.now();
  const at = now.toISOString();
  const quote = await tx.load(streams.quote(c.quoteId), Q.quoteDecider);
  const transfer = await tx.load(streams.transfer(c.transferId), T.transferDecider);
  if (transfer.state.exists) return { appends: [], result: existing(transfer.state) };
  const consumed = Q.quoteDecider.decide({
    type: 'ConsumeQuote', data: { merchantId: c.merchantId, flow: 'transfer', paymentId: c.transferId, customerId: c.customerId, now, at },
  }, quote.state);
  const q = quote.state.quote!;
  const events = T.transferDecider.decide({
    type: 'CreateTransfer',
    data: {
      transferId: c.transferId, merchantId: c.merchantId, customerId: c.customerId, quoteId: c.quoteId, quote: q,
      payer: c.payer, recipient: c.recipient, otpSupplied: c.otp !== undefined,
      kyc: await kycGate(await readMerchant(tx, c.merchantId), q.recipient_operator_code!, customerReader(tx, c.customerId)),
      paymentReasonCode: c.paymentReasonCode, senderSourceOfFunds: c.senderSourceOfFunds, senderOccupation: c.senderOccupation,
      metadata: c.metadata, availability: await readAvailabilities(tx, [q.payer_operator_code, q.recipient_operator_code]), at,
    },
  }, transfer.state);
  const appends = await withWalletEffects(tx, transfer, events, meta);
  // Sealed before the append: the collection starts with the transfer (the gateway may take it at once).
  await seal();
  return {
    appends: [{ streamId: quote.streamId, expectedVersion: quote.version, events: toNew(consumed, meta) }, ...appends],
    // The answer is the transfer as created (the reference: the create response carries `pending`);
    // its collection, decided with it, shows from the next read on.
    result: created(T.transferDecider.evolve(transfer.state, events[0]!)),
  };
}

/** Saga step for a transfer created without its collection started (an earlier version's create): it starts, once. */
export async function startCollection(s: Services, transferId: string, meta: EventMetadata): Promise<void> {
  await s.aggregates.execute(streams.transfer(transferId), T.transferDecider, () => ({ type: 'StartCollection', data: { at: s.clock.now().toISOString() } }), meta);
}

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
  // The wallet that holds the amount again; a transfer that does not exist is refused by the decider.
  const walletStreams = first.state.exists ? [streams.wallet(c.merchantId, first.state.created!.payout_currency)] : [];
  const { result, append } = await s.aggregates.transact([transferStream, ...walletStreams], async (tx) => {
    const transfer = await tx.load(transferStream, T.transferDecider);
    const events = T.transferDecider.decide({
      type: 'RelaunchPayout',
      data: {
        merchantId: c.merchantId, payoutAmount: c.payoutAmount, recipient: c.recipient, relaunchId: c.relaunchId,
        availability: await readAvailabilities(tx, [transfer.state.created?.recipient_operator_code]), at: s.clock.now().toISOString(),
      },
    }, transfer.state);
    if (events.length === 0) return { appends: [], result: existing(transfer.state) }; // this request's relaunch, done before
    return { appends: await withWalletEffects(tx, transfer, events, meta), result: created(events.reduce(T.transferDecider.evolve, transfer.state)) };
  });
  await s.awaitReadModels(append?.position);
  return result;
}
