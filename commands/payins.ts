// Merchant commands on payins, and the commands the provider gateway runs on them (commands/leg-owners.ts).
//
// Create: one atomic append, quote consumed + payin created/pending, with the expected version of
// both streams, so concurrent requests on one quote create exactly one payin and a refused request
// never consumes the quote. A payin paid through a payment link also takes a place on the link
// (`payment_link.payment_started`) in that same append: the link's rules (usable, a place free)
// are decided on the link as it is when the payin commits. The OTP is sealed in the vault just
// before that append, and discarded only if the append certainly did not happen (sealed-otp.ts);
// the events only say whether one was required and whether one was supplied.
import type { Services } from './services.ts';
import * as P from '../domain/payin.ts';
import * as Q from '../domain/quote.ts';
import * as W from '../domain/wallet.ts';
import * as L from '../domain/payment-link.ts';
import { invariant } from '../domain/errors.ts';
import type { LegOutcome, RailParty } from '../domain/payment.ts';
import type { EventMetadata, StreamAppend } from '../infra/eventstore/types.ts';
import { toNew, type AttemptLoader } from './aggregates.ts';
import { streams } from './streams.ts';
import { settleOnWallet, walletSettlement } from './wallet-settlements.ts';
import { readMerchant, requireCustomer } from './lookups.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import { withSealedOtp } from './sealed-otp.ts';
import { readAvailabilities } from './operator-availability.ts';

export interface CreatePayin {
  payinId: string;
  merchantId: string;
  customerId: string;
  quoteId: string;
  source: RailParty;
  otp: string | undefined;
  metadata: Record<string, string>;
  /** The id was drawn by this request's idempotency claim (no take-over): the payin cannot exist yet. */
  fresh?: boolean;
  /** Paid through this payment link (commands/payment-links.ts payThroughLink). */
  paymentLinkId?: string;
}

/** The link's place taken by the payin, decided on the link as it is in this attempt (none without a link). */
async function linkPlace(tx: AttemptLoader, c: CreatePayin, now: Date, meta: EventMetadata): Promise<StreamAppend[]> {
  if (c.paymentLinkId === undefined) return [];
  const streamId = streams.paymentLink(c.paymentLinkId);
  const link = await tx.load(streamId, L.paymentLinkDecider);
  invariant(!link.state.exists || link.state.created!.merchant_id === c.merchantId, `payment link ${c.paymentLinkId} belongs to another merchant`);
  L.requireMerchantCollecting((await readMerchant(tx, c.merchantId)).status);
  const events = L.paymentLinkDecider.decide({ type: 'StartPayment', data: { payinId: c.payinId, now, at: now.toISOString() } }, link.state);
  return [{ streamId, expectedVersion: link.version, events: toNew(events, meta) }];
}

export async function createPayin(s: Services, c: CreatePayin, meta: EventMetadata): Promise<Created<P.PayinState>> {
  const payinStream = streams.payin(c.payinId);
  const quoteStream = streams.quote(c.quoteId);
  const linkStreams = c.paymentLinkId === undefined ? [] : [streams.paymentLink(c.paymentLinkId)];
  const earlier = await createdEarlier(s.aggregates, payinStream, P.payinDecider, c.fresh);
  if (earlier) return earlier;
  await requireCustomer(s, c.merchantId, c.customerId);
  return withSealedOtp(s, c.payinId, c.otp, async (seal) => {
    const { result, append } = await s.aggregates.transact([quoteStream, payinStream, ...linkStreams], async (tx) => {
      const now = s.clock.now();
      const at = now.toISOString();
      const quote = await tx.load(quoteStream, Q.quoteDecider);
      const payin = await tx.load(payinStream, P.payinDecider);
      if (payin.state.exists) return { appends: [], result: existing(payin.state) };
      const consumed = Q.quoteDecider.decide({
        type: 'ConsumeQuote',
        data: { merchantId: c.merchantId, flow: 'payin', paymentId: c.payinId, customerId: c.customerId, now, at },
      }, quote.state);
      const events = P.payinDecider.decide({
        type: 'CreatePayin',
        data: {
          payinId: c.payinId, merchantId: c.merchantId, customerId: c.customerId, quote: quote.state.quote!, source: c.source,
          otpSupplied: c.otp !== undefined, metadata: c.metadata, availability: await readAvailabilities(tx, [quote.state.quote?.operator_code]),
          paymentLinkId: c.paymentLinkId, at,
        },
      }, payin.state);
      const place = await linkPlace(tx, c, now, meta);
      // Any OTP given goes to the provider (sealed until then), also where the operator needs none.
      await seal();
      return {
        appends: [
          { streamId: quoteStream, expectedVersion: quote.version, events: toNew(consumed, meta) },
          { streamId: payinStream, expectedVersion: payin.version, events: toNew(events, meta) },
          ...place,
        ],
        result: created(events.reduce(P.payinDecider.evolve, payin.state)),
      };
    });
    await s.awaitReadModels(append?.position);
    return result;
  });
}

/** The provider accepted the collection under `providerReference` (recorded once). */
export async function recordPayinSubmission(s: Services, payinId: string, providerReference: string, meta: EventMetadata): Promise<void> {
  await s.aggregates.execute(streams.payin(payinId), P.payinDecider,
    (): P.PayinCommand => ({ type: 'RecordSubmission', data: { providerReference, at: s.clock.now().toISOString() } }), meta);
}

/**
 * Completed: payin.completed + wallet.credited (send_amount less the fee to available, the fee to
 * platform:fees), atomically, in the wallet's turn (wallet-settlements.ts).
 */
export async function settlePayin(s: Services, payinId: string, outcome: LegOutcome, meta: EventMetadata): Promise<bigint | undefined> {
  const payinStream = streams.payin(payinId);
  // Only what never changes (merchant, currency: which wallet to lock); the outcome is decided in its turn.
  const first = await s.aggregates.peek(payinStream, P.payinDecider);
  invariant(first.state.exists, `outcome for unknown payin ${payinId}`);
  const d = first.state.created!;
  return settleOnWallet(s, streams.wallet(d.merchant_id, d.send_currency), walletSettlement({
    streamId: payinStream, decider: P.payinDecider, meta,
    decide: (payin, wallet, at) => {
      const events = P.payinDecider.decide({ type: 'Settle', data: { ...outcome, at } }, payin);
      const credit = events.some((e) => e.type === 'payin.completed')
        ? W.creditCollection(wallet, {
          merchantId: d.merchant_id, currency: d.send_currency, at, creditId: d.payin_id, gross: BigInt(d.send_amount),
          fee: BigInt(d.total_fee), operatorCode: d.operator_code, reference: { type: 'payin', id: d.payin_id },
        })
        : [];
      return { events, wallet: credit };
    },
  }));
}
