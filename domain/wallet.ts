// The merchant's wallet in one currency (stream `wallet-<merchantId>-<currency>`), kept as a
// double-entry ledger. Every event carries balanced postings over named accounts:
//
//   merchant:<id>:available   what the merchant can spend (never below zero)
//   merchant:<id>:reserved    held for payouts / transfer disbursements in flight (never below zero)
//   provider:<operator>       clearing with the mobile-money operator
//   platform:fees             fees earned
//   platform:funding          sandbox funding (top-ups): the only place money enters
//
// Balances are kept as credits minus debits per account, so the merchant's accounts (liabilities of
// the platform towards the merchant) are positive and the sum over all accounts is always zero.
//
// Vocabulary: a reservation is *held* (available → reserved), then *posted* (reserved → provider and
// fees: the money left) or *released* (reserved → available).
//
// The state is what is open, never the past (issue 32): the balances and the holds still held. A
// hold leaves the state when it is posted or released; credits and top-ups leave nothing but their
// balance. So a wallet costs the same to load and keep whatever its age, and it is plain data (a
// record, no persistent collections) that a snapshot stores as JSON. Exactly-once is therefore not
// the wallet's: see "Exactly once" above `decide` for who guarantees it, and why that is enough.
import { invariant, refuse } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { checkAmountRange, formatMoney, type Money } from './money.ts';
import { jsonSnapshot } from './snapshot-json.ts';

export type Side = 'debit' | 'credit';

export interface Posting {
  account: string;
  side: Side;
  /** Whole francs, decimal string, > 0. */
  amount: string;
}

/**
 * How old a decision may be when it is appended: an attempt that took longer (waiting on locks,
 * retries, a slow read) decides again with a fresh time (commands/aggregates.ts). So a wallet
 * movement commits within this of its `at`, plus the append itself.
 */
export const MAX_DECISION_AGE_MS = 10_000;
/**
 * When no movement can commit any more with an `at` before T: T + the decision age + a margin for
 * the append's own time and for clocks of several processes that disagree by a few seconds. A
 * statement of a period ended that long ago (its read models at every commit) never changes.
 */
export const SETTLE_MS = 60_000;

export const accounts = {
  available: (merchantId: string) => `merchant:${merchantId}:available`,
  reserved: (merchantId: string) => `merchant:${merchantId}:reserved`,
  provider: (operatorCode: string) => `provider:${operatorCode}`,
  fees: 'platform:fees',
  funding: 'platform:funding',
};

/** What caused a movement: the payment, transfer leg or top-up it belongs to. */
export interface MovementRef {
  type: 'top_up' | 'payin' | 'payout' | 'transfer' | 'refund';
  id: string;
}

/** The merchant's balances right after an event (read models take them as they are). */
export interface Balances {
  available: string;
  reserved: string;
}

interface Common {
  merchant_id: string;
  currency: string;
  postings: Posting[];
  balances: Balances;
  at: string;
}

export type WalletEvent =
  | DomainEvent<'wallet.topped_up', Common & { entry_id: string; amount: string; reference: MovementRef }>
  | DomainEvent<'wallet.funds_held', Common & { hold_id: string; amount: string; reference: MovementRef }>
  | DomainEvent<'wallet.hold_posted', Common & { hold_id: string; amount: string; fee: string; operator_code: string; reference: MovementRef }>
  | DomainEvent<'wallet.hold_released', Common & { hold_id: string; amount: string; reason: string | null; reference: MovementRef }>
  | DomainEvent<'wallet.credited', Common & {
    credit_id: string; gross_amount: string; fee: string; net_amount: string; operator_code: string; reference: MovementRef;
  }>;

/** The wallet a command moves money on, and when. */
interface Target {
  merchantId: string;
  currency: string;
  at: string;
}

type TopUp = Target & { entryId: string; amount: Money };
type HoldFunds = Target & { holdId: string; amount: Money; reference: MovementRef };
type PostHold = Target & { holdId: string; fee: Money; operatorCode: string };
type ReleaseHold = Target & { holdId: string; reason: string | null };
type CreditCollection = Target & { creditId: string; gross: Money; fee: Money; operatorCode: string; reference: MovementRef };

/** What may be asked of a wallet, each a plain value; each is a new movement (exactly-once: see `decide`). */
export type WalletCommand =
  | { type: 'TopUp'; data: TopUp }
  | { type: 'Hold'; data: HoldFunds }
  | { type: 'PostHold'; data: PostHold }
  | { type: 'ReleaseHold'; data: ReleaseHold }
  | { type: 'CreditCollection'; data: CreditCollection };

/** A hold still held: what posting or releasing it moves, and what it was held for. */
export interface OpenHold {
  amount: Money;
  reference: MovementRef;
}

export interface WalletState {
  merchantId: string;
  currency: string;
  /** credits − debits per account: the merchant's two and the operators' and platform's it met. */
  balances: Record<string, Money>;
  /**
   * The holds still held, by hold id; a posted or released hold is gone. Bounded by the payouts and
   * disbursements in flight, not by the wallet's age. A new record per hold event (evolve is pure):
   * the copy costs the open holds, never the history.
   */
  holds: Record<string, OpenHold>;
  updatedAt: string | null;
}

export const balanceOf = (s: WalletState, account: string): Money => s.balances[account] ?? 0n;
export const available = (s: WalletState, merchantId = s.merchantId): Money => balanceOf(s, accounts.available(merchantId));
export const reserved = (s: WalletState, merchantId = s.merchantId): Money => balanceOf(s, accounts.reserved(merchantId));

/** A broken ledger must stop the process: every event balances, merchant accounts never go negative. */
function applyPostings(s: WalletState, merchantId: string, postings: Posting[]): Record<string, Money> {
  let debits = 0n;
  let credits = 0n;
  const balances = { ...s.balances };
  for (const p of postings) {
    const amount = BigInt(p.amount);
    invariant(amount > 0n, `posting of ${p.amount} on ${p.account}: amounts are positive`);
    if (p.side === 'debit') debits += amount;
    else credits += amount;
    balances[p.account] = (balances[p.account] ?? 0n) + (p.side === 'credit' ? amount : -amount);
  }
  invariant(postings.length >= 2 && debits === credits, `unbalanced wallet event: debits ${debits}, credits ${credits}`);
  for (const account of [accounts.available(merchantId), accounts.reserved(merchantId)]) {
    invariant((balances[account] ?? 0n) >= 0n, `${account} would go below zero`);
  }
  return balances;
}

/** The holds without `holdId` (a new record: evolve never changes an earlier state). */
function withoutHold(holds: Record<string, OpenHold>, holdId: string): Record<string, OpenHold> {
  const { [holdId]: _closed, ...open } = holds;
  return open;
}

export const walletDecider: CommandDecider<WalletState, WalletEvent, WalletCommand> = {
  // Plain data (balances, open holds): a snapshot every 200 movements bounds a load's tail (issue 32).
  snapshot: jsonSnapshot<WalletState>('wallet-v2', 200),
  initialState: (): WalletState => ({ merchantId: '', currency: '', balances: {}, holds: {}, updatedAt: null }),
  evolve(s: WalletState, e: WalletEvent): WalletState {
    const base: WalletState = {
      ...s, merchantId: e.data.merchant_id, currency: e.data.currency,
      balances: applyPostings(s, e.data.merchant_id, e.data.postings), updatedAt: e.data.at,
    };
    switch (e.type) {
      case 'wallet.topped_up':
      case 'wallet.credited':
        return base;
      case 'wallet.funds_held':
        return { ...base, holds: { ...s.holds, [e.data.hold_id]: { amount: BigInt(e.data.amount), reference: e.data.reference } } };
      case 'wallet.hold_posted':
      case 'wallet.hold_released':
        return { ...base, holds: withoutHold(s.holds, e.data.hold_id) };
      default:
        return unreachable(e);
    }
  },
  /**
   * Exactly once (issue 32). The wallet decides each command as a new movement: it keeps no ids of
   * past credits, top-ups or closed holds. What makes a movement happen once is the stream of the
   * thing that moves the money, appended in the same atomic append as the wallet's events with its
   * expected version, whose decider decides nothing the second time:
   *   - a payin's credit: with `payin.completed`, only while the payin is pending (payins.ts
   *     settlePayin, in wallet-settlements.ts);
   *   - a payout's hold: with `payout.created` at expected version 0; its post or release with
   *     `payout.completed` / `payout.failed`, only while it is pending (payouts.ts);
   *   - a transfer's holds, credit, posts and releases: with the transfer's own leg events, each
   *     decided once by the transfer (transfer-wallets.ts): created at version 0, a leg settled
   *     only while pending, a relaunch once per request;
   *   - a refund's hold: with `refund.created` at expected version 0 and its payin's claim; its post or
   *     release with `refund.completed` / `refund.failed`, only while it is pending (commands/refunds.ts);
   *   - a top-up: with `top_up.recorded` on its own stream `topup-<id>` at expected version 0, the
   *     id named by the operator's Idempotency-Key (commands/wallets.ts).
   * A retry after an append in doubt, a redelivered outcome or a lagging cache decides on the moving
   * stream again: if the first attempt committed, its decider decides nothing (so no wallet command
   * is asked), or its append fails on the expected version and is decided again on a fresh read. A
   * wallet event is therefore never appended without its moving stream's events beside it.
   * What the wallet still checks from its open holds: a hold id already held is not held twice, and
   * only an open hold is posted or released (anything else is a broken invariant, loudly: an unknown
   * hold and a closed one look alike here, and neither may move money).
   */
  decide(command: WalletCommand, s: WalletState): WalletEvent[] {
    switch (command.type) {
      case 'TopUp':
        return decideTopUp(s, command.data);
      case 'Hold':
        return decideHold(s, command.data);
      case 'PostHold':
        return decidePostHold(s, command.data);
      case 'ReleaseHold':
        return decideReleaseHold(s, command.data);
      case 'CreditCollection':
        return decideCreditCollection(s, command.data);
      default:
        return unreachable(command);
    }
  },
};

// ---- decisions (pure; ids and time arrive in the command) ----

const debit = (account: string, amount: Money): Posting => ({ account, side: 'debit', amount: formatMoney(amount) });
const credit = (account: string, amount: Money): Posting => ({ account, side: 'credit', amount: formatMoney(amount) });
/** Zero-amount postings say nothing: left out (a fee of 0, say). */
const nonZero = (postings: Posting[]) => postings.filter((p) => p.amount !== '0');

/** Common fields of an event, with the merchant's balances after its postings. */
function common(s: WalletState, t: Target, postings: Posting[]): Common {
  invariant(s.merchantId === '' || s.merchantId === t.merchantId, 'wallet of another merchant');
  invariant(s.currency === '' || s.currency === t.currency, 'wallet in another currency');
  const after = applyPostings(s, t.merchantId, postings);
  return {
    merchant_id: t.merchantId, currency: t.currency, postings,
    balances: {
      available: formatMoney(after[accounts.available(t.merchantId)] ?? 0n),
      reserved: formatMoney(after[accounts.reserved(t.merchantId)] ?? 0n),
    },
    // Never before the wallet's previous movement (two processes' clocks may disagree): a wallet's
    // movements are in time order along its versions, so its balances as of T are those of its
    // last movement before T (projections/wallet-movements.ts). ISO 8601 UTC strings sort as times.
    at: s.updatedAt !== null && s.updatedAt > t.at ? s.updatedAt : t.at,
  };
}

/** Sandbox funding: platform:funding → available, within the per-transaction limits (amount_out_of_range). */
function decideTopUp(s: WalletState, c: TopUp): WalletEvent[] {
  checkAmountRange(c.amount, 'amount');
  const postings = [debit(accounts.funding, c.amount), credit(accounts.available(c.merchantId), c.amount)];
  return [{
    type: 'wallet.topped_up',
    data: { ...common(s, c, postings), entry_id: c.entryId, amount: formatMoney(c.amount), reference: { type: 'top_up', id: c.entryId } },
  }];
}

/** Reserve `amount` for a payout or disbursement leg: available → reserved, or 400 insufficient_balance. */
function decideHold(s: WalletState, c: HoldFunds): WalletEvent[] {
  invariant(c.amount > 0n, 'a hold is positive');
  if (Object.hasOwn(s.holds, c.holdId)) return []; // held already (and still open): not twice
  const have = available(s, c.merchantId);
  if (have < c.amount) {
    refuse('insufficient_balance', `Insufficient ${c.currency} balance: ${c.amount} needed, ${have} available`);
  }
  const postings = [debit(accounts.available(c.merchantId), c.amount), credit(accounts.reserved(c.merchantId), c.amount)];
  return [{ type: 'wallet.funds_held', data: { ...common(s, c, postings), hold_id: c.holdId, amount: formatMoney(c.amount), reference: c.reference } }];
}

/** The open hold a post or release settles; a hold never held, or already settled, is a broken invariant. */
function openHold(s: WalletState, holdId: string, verb: string): OpenHold {
  const h = Object.hasOwn(s.holds, holdId) ? s.holds[holdId] : undefined;
  invariant(h, `${verb} hold ${holdId}, which is not held (never held, or already posted or released)`);
  return h;
}

/**
 * The money left: reserved is debited, the operator's clearing account is credited with what it
 * pays out (amount − fee) and platform:fees with the fee. Only an open hold (see "Exactly once").
 */
function decidePostHold(s: WalletState, c: PostHold): WalletEvent[] {
  const h = openHold(s, c.holdId, 'posting');
  invariant(c.fee >= 0n && c.fee <= h.amount, `fee ${c.fee} outside the held ${h.amount}`);
  const postings = nonZero([
    debit(accounts.reserved(c.merchantId), h.amount),
    credit(accounts.provider(c.operatorCode), h.amount - c.fee),
    credit(accounts.fees, c.fee),
  ]);
  return [{
    type: 'wallet.hold_posted',
    data: {
      ...common(s, c, postings), hold_id: c.holdId, amount: formatMoney(h.amount), fee: formatMoney(c.fee),
      operator_code: c.operatorCode, reference: h.reference,
    },
  }];
}

/** The leg failed: reserved → available. Only an open hold (see "Exactly once"). */
function decideReleaseHold(s: WalletState, c: ReleaseHold): WalletEvent[] {
  const h = openHold(s, c.holdId, 'releasing');
  const postings = [debit(accounts.reserved(c.merchantId), h.amount), credit(accounts.available(c.merchantId), h.amount)];
  return [{
    type: 'wallet.hold_released',
    data: { ...common(s, c, postings), hold_id: c.holdId, amount: formatMoney(h.amount), reason: c.reason, reference: h.reference },
  }];
}

/**
 * A collection settled: the operator owes us `gross`; the merchant's available is credited with
 * gross − fee and platform:fees with the fee. Once: by the collecting payin or transfer (see "Exactly once").
 */
function decideCreditCollection(s: WalletState, c: CreditCollection): WalletEvent[] {
  invariant(c.gross > 0n && c.fee >= 0n && c.fee < c.gross, `credit of ${c.gross} with fee ${c.fee}`);
  const net = c.gross - c.fee;
  const postings = nonZero([
    debit(accounts.provider(c.operatorCode), c.gross),
    credit(accounts.available(c.merchantId), net),
    credit(accounts.fees, c.fee),
  ]);
  return [{
    type: 'wallet.credited',
    data: {
      ...common(s, c, postings), credit_id: c.creditId, gross_amount: formatMoney(c.gross), fee: formatMoney(c.fee),
      net_amount: formatMoney(net), operator_code: c.operatorCode, reference: c.reference,
    },
  }];
}

// The decisions as functions of (state, command data), for callers that decide a wallet's effect
// beside a payment's (payins, payouts, the ledger audit's specs): each is the decider's.
export const topUp = (s: WalletState, c: TopUp) => walletDecider.decide({ type: 'TopUp', data: c }, s);
export const hold = (s: WalletState, c: HoldFunds) => walletDecider.decide({ type: 'Hold', data: c }, s);
export const postHold = (s: WalletState, c: PostHold) => walletDecider.decide({ type: 'PostHold', data: c }, s);
export const releaseHold = (s: WalletState, c: ReleaseHold) => walletDecider.decide({ type: 'ReleaseHold', data: c }, s);
export const creditCollection = (s: WalletState, c: CreditCollection) => walletDecider.decide({ type: 'CreditCollection', data: c }, s);
