// Money arithmetic: whole francs as bigint (XAF and XOF have no minor unit), decimal strings at the
// edges, fee percentages as exact rationals. No JS number ever holds an amount or a rate.
import { refuse } from './errors.ts';
import { MAX_AMOUNT, MIN_AMOUNT } from './catalogue.ts';

/** An amount of whole francs. */
export type Money = bigint;

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;
/** Longest integer part we read (a bound on parsing work; far above any limit). */
const MAX_DIGITS = 30;

/**
 * Reads a decimal string as whole francs: `"5000"` and `"5000.00"` are 5000; a fractional part other
 * than zeros is a 400 `bad_request` naming `field` (XAF and XOF have no minor unit).
 */
export function parseAmount(raw: string, field: string): Money {
  const m = DECIMAL.exec(raw);
  if (!m) refuse('bad_request', `${field} must be a decimal string`, [{ field, message: 'must be a decimal string such as "5000"' }]);
  const [, whole, fraction] = m!;
  if (fraction !== undefined && !/^0+$/.test(fraction)) {
    refuse('bad_request', `${field} must be a whole number of francs`, [{ field, message: 'XAF and XOF have no minor unit: the fractional part must be zeros' }]);
  }
  const digits = whole!.replace(/^0+(?=[0-9])/, '');
  if (digits.length > MAX_DIGITS) refuse('amount_out_of_range', `${field} is out of range`, [{ field, message: `must be between ${MIN_AMOUNT} and ${MAX_AMOUNT}` }]);
  return BigInt(digits);
}

/** Sandbox limits per transaction (CONTRACT.md §3): 100 to 1,000,000, else `amount_out_of_range`. */
export function checkAmountRange(amount: Money, field: string): void {
  if (amount < MIN_AMOUNT || amount > MAX_AMOUNT) {
    refuse('amount_out_of_range', `${field} must be between ${MIN_AMOUNT} and ${MAX_AMOUNT}`, [
      { field, message: `must be between ${MIN_AMOUNT} and ${MAX_AMOUNT}, got ${amount}` },
    ]);
  }
}

export const formatMoney = (m: Money): string => m.toString();

/** A rate num/den (den > 0), exact. */
export interface Rational {
  num: bigint;
  den: bigint;
}

const PERCENT = /^([0-9]{1,3})(?:\.([0-9]{1,9}))?$/;

/**
 * "1.5" → 15/10 (per cent, not yet divided by 100). From 0 to 100 inclusive; anything else is a 400
 * `bad_request` naming `field` (a refusal, never a crash: pricing is operator input).
 */
export function parsePercent(raw: string, field = 'percent'): Rational {
  const m = PERCENT.exec(raw);
  if (!m) refuse('bad_request', `${field} must be a percentage such as "1.5"`, [{ field, message: 'must be a decimal string from "0" to "100", such as "1.5"' }]);
  const fraction = m![2] ?? '';
  const rate = { num: BigInt(m![1]! + fraction), den: 10n ** BigInt(fraction.length) };
  if (rate.num > 100n * rate.den) refuse('bad_request', `${field} must not exceed 100`, [{ field, message: 'must be between "0" and "100" per cent' }]);
  return rate;
}

/** The merchant's price for one flow (merchant.ts `PriceRule`): decimal strings. */
export interface FeeRule {
  percent: string;
  fixed: string;
}

export interface Fee {
  percentFee: Money;
  fixedFee: Money;
  total: Money;
}

/** ceil(a / b) for a ≥ 0, b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

function fixedOf(rule: FeeRule, field = 'fixed'): Money {
  const m = DECIMAL.exec(rule.fixed);
  if (!m || (m[2] !== undefined && !/^0+$/.test(m[2])) || m[1]!.length > MAX_DIGITS) {
    refuse('bad_request', `${field} must be a whole number of francs`, [{ field, message: 'must be a decimal string of whole francs, such as "50"' }]);
  }
  return BigInt(m![1]!);
}

/** Checks a price rule as the operator sets it: `<field>.percent` 0 to 100, `<field>.fixed` whole francs. */
export function checkFeeRule(rule: FeeRule, field: string): void {
  parsePercent(rule.percent, `${field}.percent`);
  fixedOf(rule, `${field}.fixed`);
}

/** Fee charged out of `amount`: ceil(amount × percent / 100) + fixed, in whole francs (rounded up). */
export function feeFor(amount: Money, rule: FeeRule): Fee {
  const rate = parsePercent(rule.percent);
  const percentFee = ceilDiv(amount * rate.num, rate.den * 100n);
  const fixedFee = fixedOf(rule);
  return { percentFee, fixedFee, total: percentFee + fixedFee };
}

/** What is left of `amount` after its fee (may be zero or negative when the fee eats it all). */
export function netOf(amount: Money, rule: FeeRule): Money {
  return amount - feeFor(amount, rule).total;
}

/**
 * The smallest gross amount whose net (after the fee) is exactly `net`, or undefined when none is
 * (a 100 % rate). net(g) = g − ceil(g·p) − fixed never decreases and grows by 0 or 1 per franc
 * (p ≤ 1), so the smallest g with net(g) ≥ `net` has net(g) = `net`: a binary search finds it.
 */
export function grossForNet(net: Money, rule: FeeRule): Money | undefined {
  const rate = parsePercent(rule.percent);
  const d = rate.den * 100n;
  if (rate.num >= d) return undefined;
  const target = net;
  let lo = net + fixedOf(rule); // net(g) ≤ g − fixed, so no smaller g can do
  if (lo < 0n) lo = 0n;
  // net(g) ≥ g·(d − n)/d − 1 − fixed, so this g is large enough.
  let hi = ceilDiv((net + fixedOf(rule) + 1n) * d, d - rate.num) + 1n;
  if (hi < lo) hi = lo;
  while (lo < hi) {
    const mid = (lo + hi) / 2n;
    if (netOf(mid, rule) >= target) hi = mid;
    else lo = mid + 1n;
  }
  return netOf(lo, rule) === target ? lo : undefined;
}
