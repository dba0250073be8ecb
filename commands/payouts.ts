// Merchant commands on payouts, and the commands the provider gateway runs on them (commands/leg-owners.ts).
//
// Create: one atomic append over three streams with their expected versions: quote consumed,
// payout created/pending, and wallet.funds_held of send_amount (hold id = payout id). Short of
// balance → 400 insufficient_balance and nothing is appended (the quote stays active).
// Outcome: completed → payout.completed + wallet.hold_posted; failed → payout.failed +
// wallet.hold_released; each pair in one append.
import type { Services } from './services.ts';
import * as P from '../domain/payout.ts';
import * as Q from '../domain/quote.ts';
import * as W from '../domain/wallet.ts';
import { invariant } from '../domain/errors.ts';
import type { LegOutcome, Recipient } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { kycGate, requireCustomer } from './lookups.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import { settleOnWallet, walletSettlement } from './wallet-settlements.ts';

export interface CreatePayout {
  payoutId: string;
  merchantId: string;
  customerId: string;
  quoteId: string;
  recipient: Recipient;
  paymentReasonText: string;
  metadata: Record<string, string>;
  /** The id was drawn by this request's idempotency claim (no take-over): the resource cannot exist yet. */
  fresh?: boolean;
}

export async function createPayout(s: Services, c: CreatePayout, meta: EventMetadata): Promise<Created<P.PayoutState>> {
  const payoutStream = streams.payout(c.payoutId);
  const quoteStream = streams.quote(c.quoteId);
  const earlier = await createdEarlier(s.aggregates, payoutStream, P.payoutDecider, c.fresh);
  if (earlier) return earlier;
  await requireCustomer(s, c.merchantId, c.customerId);
  // The wallet to hold from is the quote's currency: read it first to know which stream to lock.
  const peek = await s.aggregates.peek(quoteStream, Q.quoteDecider);
  const currency = Q.quoteFor(peek.state, c.merchantId).send_currency;
  const walletStream = streams.wallet(c.merchantId, currency);
  const { result, append } = await s.aggregates.transact([quoteStream, payoutStream, walletStream], async (tx) => {
    const now = s.clock.now();
    const at = now.toISOString();
    const quote = await tx.load(quoteStream, Q.quoteDecider);
    const payout = await tx.load(payoutStream, P.payoutDecider);
    if (payout.state.exists) return { appends: [], result: existing(payout.state) };
    const consumed = Q.quoteDecider.decide({
      type: 'ConsumeQuote',
      data: { merchantId: c.merchantId, flow: 'payout', paymentId: c.payoutId, customerId: c.customerId, now, at },
    }, quote.state);
    const q = quote.state.quote!;
    invariant(q.send_currency === currency, 'a quote never changes currency');
    const events = P.payoutDecider.decide({
      type: 'CreatePayout',
      data: {
        payoutId: c.payoutId, merchantId: c.merchantId, customerId: c.customerId, quote: q, recipient: c.recipient,
        paymentReasonText: c.paymentReasonText, metadata: c.metadata, kyc: await kycGate(s, c.merchantId, c.customerId, q.operator_code), at,
      },
    }, payout.state);
    // The hold of send_amount is the wallet's decision (insufficient_balance: nothing is appended).
    const wallet = await tx.load(walletStream, W.walletDecider);
    const held = W.hold(wallet.state, {
      merchantId: c.merchantId, currency, at, holdId: c.payoutId, amount: BigInt(q.send_amount), reference: { type: 'payout', id: c.payoutId },
    });
    return {
      appends: [
        { streamId: quoteStream, expectedVersion: quote.version, events: toNew(consumed, meta) },
        { streamId: payoutStream, expectedVersion: payout.version, events: toNew(events, meta) },
        { streamId: walletStream, expectedVersion: wallet.version, events: toNew(held, meta) },
      ],
      result: created(events.reduce(P.payoutDecider.evolve, payout.state)),
    };
  });
  await s.awaitReadModels(append?.position);
  return result;
}

/** The provider accepted the disbursement under `providerReference` (recorded once). */
export async function recordPayoutSubmission(s: Services, payoutId: string, providerReference: string, meta: EventMetadata): Promise<void> {
  await s.aggregates.execute(streams.payout(payoutId), P.payoutDecider,
    (): P.PayoutCommand => ({ type: 'RecordSubmission', data: { providerReference, at: s.clock.now().toISOString() } }), meta);
}

/** Completed: payout.completed + wallet.hold_posted; failed: payout.failed + wallet.hold_released; each in one append. */
export async function settlePayout(s: Services, payoutId: string, outcome: LegOutcome, meta: EventMetadata): Promise<bigint | undefined> {
  const payoutStream = streams.payout(payoutId);
  // Only what never changes (merchant, currency: which wallet to lock); the outcome is decided in its turn.
  const first = await s.aggregates.peek(payoutStream, P.payoutDecider);
  invariant(first.state.exists, `outcome for unknown payout ${payoutId}`);
  const d = first.state.created!;
  return settleOnWallet(s, streams.wallet(d.merchant_id, d.send_currency), walletSettlement({
    streamId: payoutStream, decider: P.payoutDecider, meta,
    decide: (payout, wallet, at) => {
      const events = P.payoutDecider.decide({ type: 'Settle', data: { ...outcome, at } }, payout);
      const target = { merchantId: d.merchant_id, currency: d.send_currency, at, holdId: d.hold_id };
      const effect = events.flatMap((e) => {
        if (e.type === 'payout.completed') return W.postHold(wallet, { ...target, fee: BigInt(d.total_fee), operatorCode: d.operator_code });
        if (e.type === 'payout.failed') return W.releaseHold(wallet, { ...target, reason: e.data.reason });
        return [];
      });
      return { events, wallet: effect };
    },
  }));
}
