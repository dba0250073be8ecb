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
import { DomainError, invariant } from '../domain/errors.ts';
import { checkParty, type LegOutcome, type Recipient } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { requireCustomer } from './lookups.ts';
import { requireKyc } from './kyc.ts';
import { created, existing, type Created } from './created.ts';
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
  if (c.fresh) s.aggregates.assumeNew(payoutStream, P.payoutDecider);
  else {
    const found = await s.aggregates.load(payoutStream, P.payoutDecider);
    if (found.state.exists) return existing(found.state); // a retry that took over the claim
  }
  await requireCustomer(s, c.merchantId, c.customerId);
  // The wallet to hold from is the quote's currency: read it first to know which stream to lock.
  const peek = await s.aggregates.peek(quoteStream, Q.quoteDecider);
  if (!peek.state.exists || peek.state.quote!.merchant_id !== c.merchantId) {
    throw new DomainError('quote_not_found', 'Quote not found', [{ field: 'quote_id', message: 'no such quote for this merchant' }]);
  }
  const currency = peek.state.quote!.send_currency;
  const walletStream = streams.wallet(c.merchantId, currency);
  const { result, append } = await s.aggregates.transact([quoteStream, payoutStream, walletStream], async (tx) => {
    const now = s.clock.now();
    const at = now.toISOString();
    const quote = await tx.load(quoteStream, Q.quoteDecider);
    const payout = await tx.load(payoutStream, P.payoutDecider);
    if (payout.state.exists) return { appends: [], result: existing(payout.state) };
    const consumed = Q.consume(quote.state, { merchantId: c.merchantId, flow: 'payout', paymentId: c.payoutId, customerId: c.customerId, now, at });
    const q = quote.state.quote!;
    invariant(q.send_currency === currency, 'a quote never changes currency');
    const recipient = checkParty(c.recipient, q, 'recipient');
    // The operator may require the customer's KYC verified (routing kyc_required_operators).
    await requireKyc(s, c.merchantId, c.customerId, q.operator_code);
    const wallet = await tx.load(walletStream, W.walletDecider);
    const held = W.hold(wallet.state, {
      merchantId: c.merchantId, currency, at, holdId: c.payoutId, amount: BigInt(q.send_amount), reference: { type: 'payout', id: c.payoutId },
    });
    const events = P.createPayout(payout.state, {
      payout_id: c.payoutId, merchant_id: c.merchantId, customer_id: c.customerId, quote_id: c.quoteId,
      send_amount: q.send_amount, send_currency: q.send_currency, receive_amount: q.receive_amount, receive_currency: q.receive_currency,
      total_fee: q.total_fee, country_code: q.country_code, operator_code: q.operator_code, rail_type: q.rail_type,
      recipient, payment_reason_text: c.paymentReasonText, pricing: q.pricing, wallet_impact: q.wallet_impact,
      metadata: c.metadata, hold_id: c.payoutId, at,
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
  const streamId = streams.payout(payoutId);
  await s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, P.payoutDecider);
    const events = P.recordSubmission(loaded.state, { providerReference, at: s.clock.now().toISOString() });
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: undefined };
  });
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
      const events = P.settle(payout, { ...outcome, at });
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
