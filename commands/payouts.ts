// Merchant commands on payouts, and the commands the provider gateway runs on them (commands/leg-owners.ts).
//
// Create: one atomic append over three streams with their expected versions: quote consumed,
// payout created/pending, and wallet.funds_held of send_amount (hold id = payout id). Short of
// balance → 400 insufficient_balance and nothing is appended (the quote stays active).
// A single create is a set of one: POST /payouts/bulk (commands/payouts-bulk.ts) decides its items
// with the same functions (planPayout, decidePayouts) in one transaction, so every rule a payout's
// creation has (quote, KYC gate, hold, and anything added to its facts or deciders) holds for both.
// Outcome: completed → payout.completed + wallet.hold_posted; failed → payout.failed +
// wallet.hold_released; each pair in one append.
import type { Services } from './services.ts';
import * as P from '../domain/payout.ts';
import * as Q from '../domain/quote.ts';
import * as W from '../domain/wallet.ts';
import { DomainError, invariant } from '../domain/errors.ts';
import type { Decider, DomainEvent } from '../domain/decider.ts';
import type { KycGate } from '../domain/kyc.ts';
import type { MerchantState } from '../domain/merchant.ts';
import type { CustomerState } from '../domain/customer.ts';
import type { LegOutcome, Recipient } from '../domain/payment.ts';
import type { EventMetadata, StreamAppend } from '../infra/eventstore/types.ts';
import { toNew, type AttemptLoader, type Loaded } from './aggregates.ts';
import { streams } from './streams.ts';
import { customerReader, kycGate, readMerchant, requireCustomer } from './lookups.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import { settleOnWallet, walletSettlement } from './wallet-settlements.ts';
import { readAvailabilities } from './operator-availability.ts';
import type { OperatorAvailabilities } from '../domain/operator-availability.ts';

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
  const earlier = await createdEarlier(s.aggregates, streams.payout(c.payoutId), P.payoutDecider, c.fresh);
  if (earlier) return earlier;
  const plan = await planPayout(s, c);
  const { result, append } = await s.aggregates.transact(payoutLockKeys([plan]), async (tx) => {
    const set = await decidePayouts(s, tx, [plan], meta);
    const answer = set.answers[0]!;
    // Thrown, the refusal is confirmed on fresh state by `transact` before it stands.
    if (!answer.ok) throw answer.error;
    return { appends: set.appends, result: answer.created };
  });
  await s.awaitReadModels(append?.position);
  return result;
}

/** A payout's creation with the streams it moves (the wallet: the quote's currency), known before its transaction. */
export interface PlannedPayout {
  c: CreatePayout;
  payoutStream: string;
  quoteStream: string;
  walletStream: string;
  currency: string;
}

/** What can be refused before the transaction: another merchant's (or no) customer or quote. */
export async function planPayout(s: Services, c: CreatePayout): Promise<PlannedPayout> {
  await requireCustomer(s, c.merchantId, c.customerId);
  // The wallet to hold from is the quote's currency: read it first to know which stream to lock.
  const quoteStream = streams.quote(c.quoteId);
  const peek = await s.aggregates.peek(quoteStream, Q.quoteDecider);
  const currency = Q.quoteFor(peek.state, c.merchantId).send_currency;
  return { c, payoutStream: streams.payout(c.payoutId), quoteStream, walletStream: streams.wallet(c.merchantId, currency), currency };
}

export const payoutLockKeys = (plans: PlannedPayout[]): string[] => plans.flatMap((p) => [p.quoteStream, p.payoutStream, p.walletStream]);

/** One payout of a set: created (or found, created earlier under the same id), or refused as its own POST /payouts would be. */
export type PayoutAnswer = { ok: true; created: Created<P.PayoutState> } | { ok: false; error: DomainError };

/**
 * What a payout's decision reads beyond its own streams (the KYC gate: the merchant's routing and
 * the customer's status), fetched for every payout of a set at once, before the decisions.
 */
interface PayoutFacts { kyc: KycGate; availability: OperatorAvailabilities }

/**
 * Decides a set of payouts inside one `transact` (a single create is a set of one): each in order,
 * on the quotes and wallets as the ones before it left them (two payouts of one quote: the second
 * finds it consumed; holds on one wallet decided together), one refusal never stopping the others.
 * Answers the appends of everything decided (quotes consumed, payouts created, wallets' holds) and
 * each payout's answer. Streams are loaded at once, the facts fetched at once: no round trip per payout.
 */
export async function decidePayouts(s: Services, tx: AttemptLoader, plans: PlannedPayout[], meta: EventMetadata): Promise<PayoutSet> {
  const load = <S, E extends DomainEvent>(ids: string[], d: Decider<S, E>) =>
    Promise.all([...new Set(ids)].map(async (id) => [id, await tx.load(id, d)] as const)).then((l) => new Map(l));
  const [quotes, payouts, wallets] = await Promise.all([
    load(plans.map((p) => p.quoteStream), Q.quoteDecider),
    load(plans.map((p) => p.payoutStream), P.payoutDecider),
    load(plans.map((p) => p.walletStream), W.walletDecider),
  ]);
  invariant(payouts.size === plans.length, 'one payout per id in a set');
  // The quotes' operators as the set reads them (CONTRACT §14: one closed for payouts refuses its payouts).
  const availability = await readAvailabilities(tx, [...quotes.values()].map((l) => l.state.quote?.operator_code));
  const facts = await Promise.allSettled(factsOf(tx, plans, quotes, availability));
  const now = s.clock.now();
  const decided = new Decided(quotes, wallets);
  const answers = plans.map((p, i): PayoutAnswer => {
    const payout = payouts.get(p.payoutStream)!;
    if (payout.state.exists) return { ok: true, created: existing(payout.state) };
    try {
      const fact = facts[i]!;
      if (fact.status === 'rejected') throw fact.reason;
      return { ok: true, created: created(decided.payout(p, payout.state, fact.value, now)) };
    } catch (err) {
      if (err instanceof DomainError) return { ok: false, error: err };
      throw err;
    }
  });
  return { answers, appends: decided.appends(payouts, meta) };
}

export interface PayoutSet { answers: PayoutAnswer[]; appends: StreamAppend[] }

/** Each plan's facts, the same question asked once (a batch's payouts share a merchant, often a customer). */
function factsOf(tx: AttemptLoader, plans: PlannedPayout[], quotes: Map<string, Loaded<Q.QuoteState>>, availability: OperatorAvailabilities): Array<Promise<PayoutFacts>> {
  const asked = new Map<string, Promise<KycGate>>();
  const merchants = new Map<string, Promise<MerchantState>>();
  const customers = new Map<string, () => Promise<CustomerState>>();
  return plans.map((p) => {
    const operator = quotes.get(p.quoteStream)!.state.quote!.operator_code;
    const key = `${p.c.customerId}:${operator}`;
    if (!asked.has(key)) {
      // Each stream read once for the set (tx.read: held unchanged until the append).
      if (!merchants.has(p.c.merchantId)) merchants.set(p.c.merchantId, readMerchant(tx, p.c.merchantId));
      if (!customers.has(p.c.customerId)) customers.set(p.c.customerId, customerReader(tx, p.c.customerId));
      asked.set(key, merchants.get(p.c.merchantId)!.then((m) => kycGate(m, operator, customers.get(p.c.customerId)!)));
    }
    return asked.get(key)!.then((kyc) => ({ kyc, availability }));
  });
}

/**
 * The states a set's decisions go through (each payout decided on the quotes and wallets as the
 * ones before it left them) and the events decided on each stream. A refused payout moves nothing.
 */
class Decided {
  private readonly quotes = new Map<string, Q.QuoteState>();
  private readonly wallets = new Map<string, W.WalletState>();
  private readonly events = new Map<string, DomainEvent[]>();

  constructor(private readonly loadedQuotes: Map<string, Loaded<Q.QuoteState>>, private readonly loadedWallets: Map<string, Loaded<W.WalletState>>) {
    for (const [id, l] of loadedQuotes) this.quotes.set(id, l.state);
    for (const [id, l] of loadedWallets) this.wallets.set(id, l.state);
  }

  /** Quote consumed, payout created, send_amount held (insufficient_balance: nothing), or the refusal thrown. */
  payout(p: PlannedPayout, state: P.PayoutState, facts: PayoutFacts, now: Date): P.PayoutState {
    const { c } = p;
    const at = now.toISOString();
    const quote = this.quotes.get(p.quoteStream)!;
    const consumed = Q.quoteDecider.decide({
      type: 'ConsumeQuote',
      data: { merchantId: c.merchantId, flow: 'payout', paymentId: c.payoutId, customerId: c.customerId, now, at },
    }, quote);
    const q = quote.quote!;
    invariant(q.send_currency === p.currency, 'a quote never changes currency');
    const events = P.payoutDecider.decide({
      type: 'CreatePayout',
      data: {
        payoutId: c.payoutId, merchantId: c.merchantId, customerId: c.customerId, quote: q, recipient: c.recipient,
        paymentReasonText: c.paymentReasonText, metadata: c.metadata, kyc: facts.kyc, availability: facts.availability, at,
      },
    }, state);
    // The hold of send_amount is the wallet's decision (insufficient_balance: nothing is appended).
    const wallet = this.wallets.get(p.walletStream)!;
    const held = W.hold(wallet, {
      merchantId: c.merchantId, currency: p.currency, at, holdId: c.payoutId, amount: BigInt(q.send_amount), reference: { type: 'payout', id: c.payoutId },
    });
    // Everything decided: only now do the states move on.
    this.quotes.set(p.quoteStream, consumed.reduce(Q.quoteDecider.evolve, quote));
    this.wallets.set(p.walletStream, held.reduce(W.walletDecider.evolve, wallet));
    this.add(p.quoteStream, consumed);
    this.add(p.payoutStream, events);
    this.add(p.walletStream, held);
    return events.reduce(P.payoutDecider.evolve, state);
  }

  /** Quotes, then payouts, then wallets: each payment's events before its wallet's in the global order, as alone. */
  appends(payouts: Map<string, Loaded<P.PayoutState>>, meta: EventMetadata): StreamAppend[] {
    return [...this.loadedQuotes.values(), ...payouts.values(), ...this.loadedWallets.values()]
      .filter((l) => this.events.has(l.streamId))
      .map((l) => ({ streamId: l.streamId, expectedVersion: l.version, events: toNew(this.events.get(l.streamId)!, meta) }));
  }

  private add(streamId: string, events: DomainEvent[]): void {
    this.events.set(streamId, [...(this.events.get(streamId) ?? []), ...events]);
  }
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
