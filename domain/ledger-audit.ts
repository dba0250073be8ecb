// The finance audit of the ledger: a pure fold over the whole event history, independent of the
// wallet decider (which throws on a broken invariant: an audit must report, not stop) and of the
// read models. Feed every event in global order to `add`, then `finish` gives the findings.
//
// What it checks (each finding names its check):
//  - `stream_order`        every stream's versions are 1, 2, 3… and global positions only grow;
//  - `entry_balanced`      every wallet event has ≥ 2 postings of positive whole amounts, debits = credits;
//  - `entry_amounts`       the postings are exactly what the movement says (a credit of gross G with
//                          fee F debits the operator G and credits available G − F and fees F; …);
//  - `stated_balances`     the balances an event states equal the fold of the postings before it;
//  - `non_negative`        no merchant's available or reserved is ever below zero, after any event;
//  - `movement_once`       a top-up, a credit and a hold happen once; a hold is settled (posted or
//                          released) at most once, only after it was held, for the amount held;
//  - `conservation`        per currency: every account sums to zero; merchants' money = top-ups +
//                          credited nets − posted holds; platform:fees = every fee; funding = −top-ups;
//  - `payment_money`       each payin, payout and transfer moved exactly the money its state says,
//                          once (a completed payin is credited once for its receive_amount, a failed
//                          one never; a payout's hold is posted iff it completed, released iff it
//                          failed; a transfer's collection is credited iff collected, each
//                          disbursement hold is posted iff that attempt completed …);
//                          a refund's hold is posted iff it completed, released iff it failed, its
//                          payin records its claim alike, and no payin is refunded beyond send_amount;
//  - `orphan_movement`     no movement names a payment or transfer that does not exist.
import type { DomainEvent } from './decider.ts';
import { payinDecider, type PayinState } from './payin.ts';
import { payoutDecider, type PayoutState } from './payout.ts';
import { refundDecider, type RefundState } from './refund.ts';
import { refundableOf } from './payin-refunds.ts';
import { transferDecider, collectionReference, payoutReference, type TransferState } from './transfer.ts';
import { accounts, type Posting, type WalletEvent } from './wallet.ts';

export type LedgerCheck =
  | 'stream_order' | 'entry_balanced' | 'entry_amounts' | 'stated_balances' | 'non_negative'
  | 'movement_once' | 'conservation' | 'payment_money' | 'orphan_movement';

export const LEDGER_CHECKS: LedgerCheck[] = [
  'stream_order', 'entry_balanced', 'entry_amounts', 'stated_balances', 'non_negative',
  'movement_once', 'conservation', 'payment_money', 'orphan_movement',
];

export interface LedgerFinding {
  check: LedgerCheck;
  message: string;
  stream?: string;
  /** Global position of the event at fault, as a decimal string. */
  position?: string;
}

/** What the audit needs of a recorded event. */
export interface AuditedEvent {
  streamId: string;
  version: number;
  position: bigint;
  type: string;
  data: Record<string, unknown>;
}

export interface CurrencyTotals {
  currency: string;
  /** Sum of every merchant's available + reserved (from the postings). */
  merchant_balances: string;
  top_ups: string;
  credited_net: string;
  posted_holds: string;
  fees: string;
  /** Each account's balance summed over every account: always "0" in a sound ledger. */
  all_accounts: string;
}

export interface LedgerSummary {
  events: number;
  wallet_events: number;
  wallets: number;
  payins: number;
  payouts: number;
  transfers: number;
  refunds: number;
  currencies: CurrencyTotals[];
}

const WHOLE = /^[1-9][0-9]*$/;
/** Findings kept per check (the count goes on): a broken ledger must not make an unbounded report. */
export const MAX_FINDINGS_PER_CHECK = 100;

interface Hold {
  amount: bigint;
  currency: string;
  merchantId: string;
  held: number;
  posted: number;
  released: number;
  postedAt?: string;
}

interface Totals {
  topUps: bigint;
  creditedNet: bigint;
  postedHolds: bigint;
  fees: bigint;
  /** credits − debits per account. */
  accounts: Map<string, bigint>;
}

interface Credit {
  gross: bigint;
  fee: bigint;
  net: bigint;
  currency: string;
  count: number;
}

type Where = { stream: string; position: string };

/** One wallet event under audit, with what each of its checks needs. */
interface WalletEntry {
  type: string;
  merchantId: string;
  currency: string;
  postings: Posting[];
  /** The currency's totals, which the movement adds to. */
  totals: Totals;
  where: Where;
}

/** An amount as a bigint; −1 for anything not a string of digits (so the postings check reports it). */
const amountOf = (v: unknown): bigint => (typeof v === 'string' && /^[0-9]+$/.test(v) ? BigInt(v) : -1n);

/** A payment folded as its events arrive (`broken`: an event its decider refused). */
type Folded<S> = { state: S; broken?: string };
type AnyDecider<S> = { initialState(): S; evolve(s: S, e: never): S };

export class LedgerAudit {
  private readonly findings: LedgerFinding[] = [];
  private readonly counts = new Map<LedgerCheck, number>();
  private readonly versions = new Map<string, number>();
  private lastPosition = -1n;
  private events = 0;
  private walletEvents = 0;
  /** Per wallet stream: credits − debits per account. */
  private readonly wallets = new Map<string, Map<string, bigint>>();
  private readonly totals = new Map<string, Totals>();
  private readonly topUps = new Map<string, number>();
  private readonly credits = new Map<string, Credit>();
  private readonly holds = new Map<string, Hold>();
  private readonly payins = new Map<string, Folded<PayinState>>();
  private readonly payouts = new Map<string, Folded<PayoutState>>();
  private readonly transfers = new Map<string, Folded<TransferState>>();
  private readonly refunds = new Map<string, Folded<RefundState>>();
  /** Movements by the payment they name (reference type:id), to find orphans. */
  private readonly referenced = new Map<string, { stream: string; position: string }>();

  private find(f: LedgerFinding): void {
    const n = (this.counts.get(f.check) ?? 0) + 1;
    this.counts.set(f.check, n);
    if (n <= MAX_FINDINGS_PER_CHECK) this.findings.push(f);
  }

  add(e: AuditedEvent): void {
    this.events++;
    const at = e.position.toString();
    if (e.position <= this.lastPosition) {
      this.find({ check: 'stream_order', message: `global position ${at} after ${this.lastPosition}`, stream: e.streamId, position: at });
    }
    this.lastPosition = e.position;
    const previous = this.versions.get(e.streamId) ?? 0;
    if (e.version !== previous + 1) {
      this.find({ check: 'stream_order', message: `version ${e.version} after ${previous}`, stream: e.streamId, position: at });
    }
    this.versions.set(e.streamId, e.version);

    const ev = { type: e.type, data: e.data } as DomainEvent;
    if (e.streamId.startsWith('wallet-')) this.wallet(e, at);
    else if (e.streamId.startsWith('payin-')) this.evolve(this.payins, payinDecider, e.streamId.slice(6), ev);
    else if (e.streamId.startsWith('payout-')) this.evolve(this.payouts, payoutDecider, e.streamId.slice(7), ev);
    else if (e.streamId.startsWith('transfer-')) this.evolve(this.transfers, transferDecider, e.streamId.slice(9), ev);
    else if (e.streamId.startsWith('refund-')) this.evolve(this.refunds, refundDecider, e.streamId.slice(7), ev);
  }

  private evolve<S>(m: Map<string, Folded<S>>, decider: AnyDecider<S>, id: string, e: DomainEvent): void {
    const f = m.get(id) ?? { state: decider.initialState() };
    m.set(id, f);
    if (f.broken) return;
    try {
      f.state = decider.evolve(f.state, e as never);
    } catch (err) {
      f.broken = (err as Error).message;
    }
  }

  private totalsOf(currency: string): Totals {
    let t = this.totals.get(currency);
    if (!t) {
      t = { topUps: 0n, creditedNet: 0n, postedHolds: 0n, fees: 0n, accounts: new Map() };
      this.totals.set(currency, t);
    }
    return t;
  }

  private wallet(r: AuditedEvent, at: string): void {
    this.walletEvents++;
    const e = { type: r.type, data: r.data } as unknown as WalletEvent;
    const d = e.data;
    const where = { stream: r.streamId, position: at };
    const merchantId = String(d.merchant_id);
    const currency = String(d.currency);
    if (r.streamId !== `wallet-${merchantId}-${currency}`) {
      this.find({ check: 'entry_amounts', message: `event for wallet ${merchantId}/${currency} in stream ${r.streamId}`, ...where });
    }
    const postings: Posting[] = Array.isArray(d.postings) ? d.postings : [];
    this.checkBalanced(r.type, postings, where);
    const balances = this.wallets.get(r.streamId) ?? new Map<string, bigint>();
    this.wallets.set(r.streamId, balances);
    const entry: WalletEntry = { type: r.type, merchantId, currency, postings, totals: this.totalsOf(currency), where };
    this.foldPostings(entry, balances);
    this.checkBalances(entry, balances, d.balances);
    const ref = (d as { reference?: { type?: string; id?: string } }).reference;
    if (ref && ref.type !== 'top_up' && typeof ref.id === 'string') this.referenced.set(`${ref.type}:${ref.id}`, where);
    this.checkMovement(entry, e);
  }

  /** entry_balanced: shape and balance of the postings. */
  private checkBalanced(type: string, postings: Posting[], where: Where): void {
    let debits = 0n;
    let credits = 0n;
    let wellFormed = postings.length >= 2;
    for (const p of postings) {
      if (!WHOLE.test(String(p.amount)) || (p.side !== 'debit' && p.side !== 'credit') || typeof p.account !== 'string') {
        wellFormed = false;
        continue;
      }
      if (p.side === 'debit') debits += BigInt(p.amount);
      else credits += BigInt(p.amount);
    }
    if (!wellFormed || debits !== credits) {
      this.find({ check: 'entry_balanced', message: `${type}: ${postings.length} postings, debits ${debits}, credits ${credits}`, ...where });
    }
  }

  /** Adds the postings to the wallet's balances and to the currency's accounts. */
  private foldPostings(entry: WalletEntry, balances: Map<string, bigint>): void {
    const accountsTotals = entry.totals.accounts;
    for (const p of entry.postings) {
      if (!WHOLE.test(String(p.amount))) continue;
      const signed = p.side === 'credit' ? BigInt(p.amount) : -BigInt(p.amount);
      balances.set(p.account, (balances.get(p.account) ?? 0n) + signed);
      accountsTotals.set(p.account, (accountsTotals.get(p.account) ?? 0n) + signed);
    }
  }

  /** stated_balances and non_negative, against the postings folded so far. */
  private checkBalances(entry: WalletEntry, balances: Map<string, bigint>, stated: { available: string; reserved: string } | undefined): void {
    const { type, merchantId, currency, where } = entry;
    const available = balances.get(accounts.available(merchantId)) ?? 0n;
    const reserved = balances.get(accounts.reserved(merchantId)) ?? 0n;
    if (available < 0n || reserved < 0n) {
      this.find({ check: 'non_negative', message: `merchant ${merchantId} ${currency}: available ${available}, reserved ${reserved} after ${type}`, ...where });
    }
    const said = stated ?? { available: '?', reserved: '?' };
    if (said.available !== available.toString() || said.reserved !== reserved.toString()) {
      this.find({
        check: 'stated_balances',
        message: `${type} states available ${said.available}, reserved ${said.reserved}; the postings give ${available}, ${reserved}`,
        ...where,
      });
    }
  }

  /** entry_amounts, movement_once and the per-currency totals, by movement. */
  private checkMovement(entry: WalletEntry, e: WalletEvent): void {
    switch (e.type) {
      case 'wallet.topped_up': return this.toppedUp(entry, e.data);
      case 'wallet.funds_held': return this.fundsHeld(entry, e.data);
      case 'wallet.hold_posted': return this.holdPosted(entry, e.data);
      case 'wallet.hold_released': return this.holdReleased(entry, e.data);
      case 'wallet.credited': return this.credited(entry, e.data);
      default:
        this.find({ check: 'entry_balanced', message: `unknown wallet event ${entry.type}`, ...entry.where });
    }
  }

  /** entry_amounts: the postings are exactly the ones the movement implies (zero amounts left out). */
  private expectPostings(entry: WalletEntry, wanted: Array<[string, 'debit' | 'credit', bigint]>): void {
    const want = wanted.filter(([, , a]) => a !== 0n).map(([acc, side, a]) => `${side} ${acc} ${a}`).sort();
    const have = entry.postings.map((p) => `${p.side} ${p.account} ${p.amount}`).sort();
    if (JSON.stringify(want) !== JSON.stringify(have)) {
      this.find({ check: 'entry_amounts', message: `${entry.type}: postings [${have.join('; ')}], the movement says [${want.join('; ')}]`, ...entry.where });
    }
  }

  private toppedUp(entry: WalletEntry, data: { entry_id: string; amount: string }): void {
    const a = amountOf(data.amount);
    this.expectPostings(entry, [[accounts.funding, 'debit', a], [accounts.available(entry.merchantId), 'credit', a]]);
    const n = (this.topUps.get(data.entry_id) ?? 0) + 1;
    this.topUps.set(data.entry_id, n);
    if (n > 1) this.find({ check: 'movement_once', message: `top-up ${data.entry_id} recorded ${n} times`, ...entry.where });
    entry.totals.topUps += a;
  }

  private fundsHeld(entry: WalletEntry, data: { hold_id: string; amount: string }): void {
    const { merchantId, currency } = entry;
    const a = amountOf(data.amount);
    this.expectPostings(entry, [[accounts.available(merchantId), 'debit', a], [accounts.reserved(merchantId), 'credit', a]]);
    const h = this.holds.get(data.hold_id);
    if (h) {
      h.held++;
      this.find({ check: 'movement_once', message: `hold ${data.hold_id} held ${h.held} times`, ...entry.where });
    } else {
      this.holds.set(data.hold_id, { amount: a, currency, merchantId, held: 1, posted: 0, released: 0 });
    }
  }

  private holdPosted(entry: WalletEntry, data: { hold_id: string; amount: string; fee: string; operator_code: string }): void {
    const a = this.settleHold(entry, 'posted', data);
    const fee = amountOf(data.fee);
    this.expectPostings(entry, [
      [accounts.reserved(entry.merchantId), 'debit', a],
      [accounts.provider(data.operator_code), 'credit', a - fee],
      [accounts.fees, 'credit', fee],
    ]);
    entry.totals.postedHolds += a;
    entry.totals.fees += fee;
  }

  private holdReleased(entry: WalletEntry, data: { hold_id: string; amount: string }): void {
    const a = this.settleHold(entry, 'released', data);
    this.expectPostings(entry, [[accounts.reserved(entry.merchantId), 'debit', a], [accounts.available(entry.merchantId), 'credit', a]]);
  }

  /** movement_once for a hold's settlement: held before, settled once, for the amount held. Returns the amount. */
  private settleHold(entry: WalletEntry, verb: 'posted' | 'released', data: { hold_id: string; amount: string }): bigint {
    const { merchantId, currency, where } = entry;
    const a = amountOf(data.amount);
    const h = this.holds.get(data.hold_id);
    if (!h) {
      this.find({ check: 'movement_once', message: `hold ${data.hold_id} ${verb} but never held`, ...where });
      return a;
    }
    if (h.posted + h.released > 0) {
      this.find({ check: 'movement_once', message: `hold ${data.hold_id} ${verb} after it was already ${h.posted > 0 ? 'posted' : 'released'}`, ...where });
    }
    if (h.amount !== a || h.currency !== currency || h.merchantId !== merchantId) {
      this.find({ check: 'movement_once', message: `hold ${data.hold_id} ${verb} for ${a} ${currency}, held ${h.amount} ${h.currency}`, ...where });
    }
    if (verb === 'posted') h.posted++;
    else h.released++;
    return a;
  }

  private credited(entry: WalletEntry, data: { credit_id: string; gross_amount: string; fee: string; net_amount: string; operator_code: string }): void {
    const gross = amountOf(data.gross_amount);
    const fee = amountOf(data.fee);
    const net = amountOf(data.net_amount);
    if (net !== gross - fee) {
      this.find({ check: 'entry_amounts', message: `credit ${data.credit_id}: net ${net} is not gross ${gross} − fee ${fee}`, ...entry.where });
    }
    this.expectPostings(entry, [
      [accounts.provider(data.operator_code), 'debit', gross],
      [accounts.available(entry.merchantId), 'credit', net],
      [accounts.fees, 'credit', fee],
    ]);
    const c = this.credits.get(data.credit_id);
    if (c) {
      c.count++;
      this.find({ check: 'movement_once', message: `credit ${data.credit_id} recorded ${c.count} times`, ...entry.where });
    } else {
      this.credits.set(data.credit_id, { gross, fee, net, currency: entry.currency, count: 1 });
    }
    entry.totals.creditedNet += net;
    entry.totals.fees += fee;
  }

  private reportBroken<S>(m: Map<string, Folded<S>>, kind: string): void {
    for (const [id, f] of m) {
      if (f.broken) this.find({ check: 'payment_money', message: `${kind} ${id}: its events do not fold (${f.broken})`, stream: `${kind}-${id}` });
    }
  }

  private expectCredit(kind: string, id: string, creditId: string, expected: { gross: bigint; fee: bigint; currency: string } | null): void {
    const c = this.credits.get(creditId);
    const stream = `${kind}-${id}`;
    if (!expected) {
      if (c) this.find({ check: 'payment_money', message: `${kind} ${id} was not collected but ${creditId} was credited ${c.net}`, stream });
      return;
    }
    if (!c) {
      this.find({ check: 'payment_money', message: `${kind} ${id} was collected but ${creditId} was never credited`, stream });
      return;
    }
    if (c.gross !== expected.gross || c.fee !== expected.fee || c.currency !== expected.currency) {
      this.find({
        check: 'payment_money',
        message: `${kind} ${id}: credited ${c.gross} − ${c.fee} ${c.currency}, expected ${expected.gross} − ${expected.fee} ${expected.currency}`,
        stream,
      });
    }
  }

  private expectHold(kind: string, id: string, holdId: string, expected: { amount: bigint; currency: string; settled: 'none' | 'posted' | 'released' }): void {
    const h = this.holds.get(holdId);
    const stream = `${kind}-${id}`;
    if (!h) {
      this.find({ check: 'payment_money', message: `${kind} ${id}: hold ${holdId} of ${expected.amount} ${expected.currency} was never made`, stream });
      return;
    }
    if (h.amount !== expected.amount || h.currency !== expected.currency) {
      this.find({ check: 'payment_money', message: `${kind} ${id}: hold ${holdId} is ${h.amount} ${h.currency}, expected ${expected.amount} ${expected.currency}`, stream });
    }
    const actual = h.posted > 0 ? 'posted' : h.released > 0 ? 'released' : 'none';
    if (actual !== expected.settled) {
      this.find({ check: 'payment_money', message: `${kind} ${id}: hold ${holdId} is ${actual === 'none' ? 'still held' : actual}, its state says ${expected.settled === 'none' ? 'still held' : expected.settled}`, stream });
    }
  }

  finish(): { findings: LedgerFinding[]; counts: Record<LedgerCheck, number>; summary: LedgerSummary } {
    this.reportBroken(this.payins, 'payin');
    this.reportBroken(this.payouts, 'payout');
    this.reportBroken(this.transfers, 'transfer');
    this.reportBroken(this.refunds, 'refund');
    this.checkPayins();
    this.checkPayouts();
    this.checkTransfers();
    this.checkRefunds();
    this.checkOrphans();
    const currencies = this.checkConservation();
    const counts = Object.fromEntries(LEDGER_CHECKS.map((c) => [c, this.counts.get(c) ?? 0])) as Record<LedgerCheck, number>;
    return {
      findings: this.findings,
      counts,
      summary: {
        events: this.events, wallet_events: this.walletEvents, wallets: this.wallets.size,
        payins: this.payins.size, payouts: this.payouts.size, transfers: this.transfers.size, refunds: this.refunds.size, currencies,
      },
    };
  }

  /** payment_money: a completed payin credited once for what was sent, any other never. */
  private checkPayins(): void {
    for (const [id, { state, broken }] of this.payins) {
      const d = state.created;
      if (!d || broken) continue;
      this.expectCredit('payin', id, d.payin_id, state.status === 'completed'
        ? { gross: BigInt(d.send_amount), fee: BigInt(d.total_fee), currency: d.send_currency }
        : null);
    }
  }

  /** payment_money: a payout's hold posted iff it completed, released iff it failed. */
  private checkPayouts(): void {
    for (const [id, { state, broken }] of this.payouts) {
      const d = state.created;
      if (!d || broken) continue;
      this.expectHold('payout', id, d.hold_id, {
        amount: BigInt(d.send_amount), currency: d.send_currency,
        settled: state.status === 'completed' ? 'posted' : state.status === 'failed' ? 'released' : 'none',
      });
    }
  }

  /** payment_money: a transfer's collection credited iff collected, each disbursement hold as its attempt went. */
  private checkTransfers(): void {
    for (const [id, { state, broken }] of this.transfers) {
      const t = state.created;
      if (!t || broken) continue;
      this.expectCredit('transfer', id, collectionReference(id), state.payin_status === 'completed'
        ? { gross: BigInt(t.payin_amount), fee: BigInt(t.total_fee), currency: t.payin_currency }
        : null);
      // The first disbursement is held at create (before it starts), and released if the collection fails.
      const first = payoutReference(id, 1);
      if (!state.attempts.some((a) => a.leg_reference === first)) {
        this.expectHold('transfer', id, first, {
          amount: BigInt(t.payout_amount), currency: t.payout_currency, settled: state.payin_status === 'failed' ? 'released' : 'none',
        });
      }
      for (const a of state.attempts) {
        this.expectHold('transfer', id, a.leg_reference, {
          amount: BigInt(a.amount), currency: t.payout_currency,
          settled: a.status === 'completed' ? 'posted' : a.status === 'failed' ? 'released' : 'none',
        });
      }
    }
  }

  /**
   * payment_money: a refund's hold posted iff it completed, released iff it failed; its payin
   * records its claim for the same amount and outcome; no payin refunded beyond its send_amount.
   */
  private checkRefunds(): void {
    for (const [id, { state, broken }] of this.refunds) {
      const d = state.created;
      if (!d || broken) continue;
      this.expectHold('refund', id, d.hold_id, {
        amount: BigInt(d.amount), currency: d.currency,
        settled: state.status === 'completed' ? 'posted' : state.status === 'failed' ? 'released' : 'none',
      });
      const claim = this.payins.get(d.payin_id)?.state.refunds.find((c) => c.refund_id === id);
      const expected = state.status === 'completed' || state.status === 'failed' ? state.status : 'open';
      if (!claim || claim.amount !== d.amount || claim.status !== expected) {
        this.find({
          check: 'payment_money', stream: `refund-${id}`,
          message: `refund ${id} (${d.amount}, ${state.status}): its payin ${d.payin_id} records ${claim ? `${claim.amount}, ${claim.status}` : 'no claim'}`,
        });
      }
    }
    for (const [id, { state, broken }] of this.payins) {
      if (!broken && state.created && refundableOf(state) < 0n) {
        this.find({ check: 'payment_money', message: `payin ${id}: refunds beyond its send_amount ${state.created.send_amount}`, stream: `payin-${id}` });
      }
    }
  }

  /** orphan_movement: every payment a movement names exists. */
  private checkOrphans(): void {
    for (const [key, where] of this.referenced) {
      const [type, id] = key.split(/:(.*)/s) as [string, string];
      const known = type === 'payin' ? this.payins.get(id)?.state.created
        : type === 'payout' ? this.payouts.get(id)?.state.created
          : type === 'transfer' ? this.transfers.get(id)?.state.created
            : type === 'refund' ? this.refunds.get(id)?.state.created
            : undefined;
      if (!known) this.find({ check: 'orphan_movement', message: `a movement names ${type} ${id}, which does not exist`, ...where });
    }
  }

  /** conservation, per currency in name order; returns each currency's totals for the summary. */
  private checkConservation(): CurrencyTotals[] {
    return [...this.totals].sort(([a], [b]) => a.localeCompare(b)).map(([currency, t]) => this.conservationOf(currency, t));
  }

  private conservationOf(currency: string, t: Totals): CurrencyTotals {
    let merchants = 0n;
    let all = 0n;
    for (const [account, balance] of t.accounts) {
      all += balance;
      if (account.startsWith('merchant:')) merchants += balance;
    }
    const fees = t.accounts.get(accounts.fees) ?? 0n;
    const funding = t.accounts.get(accounts.funding) ?? 0n;
    const expectedMerchants = t.topUps + t.creditedNet - t.postedHolds;
    if (all !== 0n) this.find({ check: 'conservation', message: `${currency}: the accounts sum to ${all}, not 0` });
    if (merchants !== expectedMerchants) {
      this.find({
        check: 'conservation',
        message: `${currency}: merchants hold ${merchants}, but top-ups ${t.topUps} + credited ${t.creditedNet} − posted ${t.postedHolds} = ${expectedMerchants}`,
      });
    }
    if (fees !== t.fees) this.find({ check: 'conservation', message: `${currency}: platform:fees is ${fees}, the movements' fees sum to ${t.fees}` });
    if (funding !== -t.topUps) this.find({ check: 'conservation', message: `${currency}: platform:funding is ${funding}, top-ups sum to ${t.topUps}` });
    return {
      currency, merchant_balances: merchants.toString(), top_ups: t.topUps.toString(), credited_net: t.creditedNet.toString(),
      posted_holds: t.postedHolds.toString(), fees: fees.toString(), all_accounts: all.toString(),
    };
  }
}
