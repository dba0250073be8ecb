// Merchant commands on payins, and the commands the provider gateway runs on them (commands/leg-owners.ts).
//
// Create: one atomic append, quote consumed + payin created/pending, with the expected version of
// both streams, so concurrent requests on one quote create exactly one payin and a refused request
// never consumes the quote. The OTP is sealed in the vault just before that append, and discarded
// only if the append certainly did not happen (sealed-otp.ts); the events only say whether one was
// required and whether one was supplied.
import type { Services } from './services.ts';
import * as P from '../domain/payin.ts';
import * as Q from '../domain/quote.ts';
import * as W from '../domain/wallet.ts';
import { operator } from '../domain/catalogue.ts';
import { DomainError, invariant } from '../domain/errors.ts';
import { checkParty, type LegOutcome, type RailParty } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { settleOnWallet, walletSettlement } from './wallet-settlements.ts';
import { requireCustomer } from './lookups.ts';
import { created, existing, type Created } from './created.ts';
import { withSealedOtp } from './sealed-otp.ts';

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
}

export async function createPayin(s: Services, c: CreatePayin, meta: EventMetadata): Promise<Created<P.PayinState>> {
  const payinStream = streams.payin(c.payinId);
  const quoteStream = streams.quote(c.quoteId);
  if (c.fresh) s.aggregates.assumeNew(payinStream, P.payinDecider);
  else {
    const found = await s.aggregates.load(payinStream, P.payinDecider);
    if (found.state.exists) return existing(found.state); // a retry that took over the claim
  }
  await requireCustomer(s, c.merchantId, c.customerId);
  return withSealedOtp(s, c.payinId, c.otp, async (seal) => {
    const { result, append } = await s.aggregates.transact([quoteStream, payinStream], async (tx) => {
      const now = s.clock.now();
      const at = now.toISOString();
      const quote = await tx.load(quoteStream, Q.quoteDecider);
      const payin = await tx.load(payinStream, P.payinDecider);
      if (payin.state.exists) return { appends: [], result: existing(payin.state) };
      const consumed = Q.consume(quote.state, { merchantId: c.merchantId, flow: 'payin', paymentId: c.payinId, customerId: c.customerId, now, at });
      const q = quote.state.quote!;
      const source = checkParty(c.source, q, 'source');
      const otpRequired = operator(q.operator_code)!.requiresOtp;
      if (otpRequired && c.otp === undefined) {
        throw new DomainError('otp_required', `${q.operator_code} requires a one-time password to collect`, [{ field: 'otp', message: 'is required for this operator' }]);
      }
      const events = P.createPayin(payin.state, {
        payin_id: c.payinId, merchant_id: c.merchantId, customer_id: c.customerId, quote_id: c.quoteId,
        send_amount: q.send_amount, send_currency: q.send_currency, receive_amount: q.receive_amount, receive_currency: q.receive_currency,
        total_fee: q.total_fee, country_code: q.country_code, operator_code: q.operator_code, rail_type: q.rail_type,
        source, pricing: q.pricing, wallet_impact: q.wallet_impact, metadata: c.metadata,
        otp_required: otpRequired, otp_supplied: c.otp !== undefined, at,
      });
      // Any OTP given goes to the provider (sealed until then), also where the operator needs none.
      await seal();
      return {
        appends: [
          { streamId: quoteStream, expectedVersion: quote.version, events: toNew(consumed, meta) },
          { streamId: payinStream, expectedVersion: payin.version, events: toNew(events, meta) },
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
  const streamId = streams.payin(payinId);
  await s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, P.payinDecider);
    const events = P.recordSubmission(loaded.state, { providerReference, at: s.clock.now().toISOString() });
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: undefined };
  });
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
      const events = P.settle(payin, { ...outcome, at });
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
