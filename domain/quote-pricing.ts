// Pricing a quote (CONTRACT.md §3), pure: the merchant's routing and pricing, ids and time arrive in
// the request. Fees are charged out of the amount, fee = ceil(amount × percent / 100) + fixed, in
// whole francs; receive_amount = send_amount − total_fee. XAF↔XOF is exactly 1.
// Transfers: send_amount = payin_amount, receive_amount = payout_amount; with a fixed payout_amount
// the payin amount is the smallest that leaves exactly that payout after the fee.
import { invariant, refuse } from './errors.ts';
import { COUNTRIES, corridorCode, MAX_AMOUNT, operator, type CountryCode, type Currency, type Flow, type OperatorInfo } from './catalogue.ts';
import type { PriceRule, Pricing, Routing } from './merchant.ts';
import { checkAmountRange, checkFeeRule, feeFor, formatMoney, grossForNet, parseAmount, type Money } from './money.ts';
import type { WalletEffect, WalletImpact } from './payment.ts';
import { requireAvailable, type OperatorAvailabilities, type QuotedAvailability } from './operator-availability.ts';

type CorridorType = 'domestic' | 'cross_border';

/** How the fee was computed, stated on the quote and every payment made from it. */
export interface QuotePricing {
  /** The merchant's rule in force when quoting. */
  percent: string;
  fixed: string;
  percent_fee: string;
  fixed_fee: string;
  total_fee: string;
  fee_currency: Currency;
  /** Units of receive currency per unit of send currency (XAF↔XOF: exactly 1). */
  fx_rate: string;
  /** Which amount the merchant fixed: `send` (the fee comes out of it) or `receive` (transfer with payout_amount). */
  fixed_side: 'send' | 'receive';
}

export interface QuoteCreated {
  quote_id: string;
  merchant_id: string;
  customer_id: string | null;
  flow_type: Flow;
  send_amount: string;
  send_currency: Currency;
  receive_amount: string;
  receive_currency: Currency;
  total_fee: string;
  /** Payins and payouts: the operator's; transfers: the payer's. */
  country_code: string;
  operator_code: string;
  rail_type: 'mobile_money';
  corridor_code: string | null;
  corridor_type: CorridorType | null;
  payer_operator_code: string | null;
  recipient_operator_code: string | null;
  payin_amount: string | null;
  payin_currency: Currency | null;
  payout_amount: string | null;
  payout_currency: Currency | null;
  pricing: QuotePricing;
  wallet_impact: WalletImpact;
  /**
   * The operators' availability when quoted (CONTRACT §14): `delayed` when one the quote uses is (a
   * transfer: the payer's for payins or the recipient's for payouts). Absent on quotes made before §14.
   */
  operator_availability?: QuotedAvailability;
  expires_at: string;
  at: string;
}

interface QuoteCommon {
  quoteId: string;
  merchantId: string;
  customerId: string | null;
  routing: Routing;
  pricing: Pricing;
  /** The availability of the operators the request names, as read with the quote (closed: refused). */
  availability: OperatorAvailabilities;
  at: string;
  expiresAt: string;
}

interface QuoteLeg {
  countryCode: string;
  operatorCode: string | undefined;
  railType: string;
  sendAmount: string;
  sendCurrency: string;
}

const sign = (m: Money) => formatMoney(m);
const neg = (m: Money) => formatMoney(-m);

/** The operator of a quote leg, checked against country, currency and rail (else `unsupported_route`). */
function routeOf(c: { countryCode: string; operatorCode: string | undefined; railType: string; currency: string }, field: string): OperatorInfo {
  if (c.railType !== 'mobile_money') refuse('unsupported_route', `rail_type ${c.railType} is not offered: every sandbox operator is mobile_money`);
  if (c.operatorCode === undefined) refuse('bad_request', `${field} is required`, [{ field, message: 'is required for mobile_money' }]);
  const op = operator(c.operatorCode!);
  if (!Object.hasOwn(COUNTRIES, c.countryCode)) refuse('unsupported_route', `country ${c.countryCode} is not covered`);
  if (!op) refuse('unsupported_route', `unknown operator ${c.operatorCode}`);
  if (op!.country !== c.countryCode) refuse('unsupported_route', `${op!.code} does not operate in ${c.countryCode}`);
  if (op!.currency !== c.currency) refuse('unsupported_route', `${op!.code} works in ${op!.currency}, not ${c.currency}`);
  return op!;
}

function pricingOf(rule: PriceRule, fee: { percentFee: Money; fixedFee: Money; total: Money }, currency: Currency, fixedSide: 'send' | 'receive'): QuotePricing {
  return {
    percent: rule.percent, fixed: rule.fixed, percent_fee: formatMoney(fee.percentFee), fixed_fee: formatMoney(fee.fixedFee),
    total_fee: formatMoney(fee.total), fee_currency: currency, fx_rate: '1', fixed_side: fixedSide,
  };
}

/** What remains after the fee must be a positive amount within the limit. */
function checkNet(net: Money, field: string): void {
  if (net <= 0n) refuse('amount_out_of_range', `${field} does not cover the fee`, [{ field, message: 'is too small to cover the fee' }]);
  if (net > MAX_AMOUNT) refuse('amount_out_of_range', `${field} is out of range`);
}

function priceLeg(c: QuoteCommon & QuoteLeg & { flow: 'payin' | 'payout' }): QuoteCreated {
  const amount = parseAmount(c.sendAmount, 'send_amount');
  const op = routeOf({ ...c, currency: c.sendCurrency }, 'operator_code');
  const enabled = c.flow === 'payin' ? c.routing.payin_operators : c.routing.payout_operators;
  if (!enabled.includes(op.code)) refuse('operator_not_enabled', `${op.code} is not enabled for ${c.flow}s on this account`);
  const availability = requireAvailable(c.availability, [{ operatorCode: op.code, flow: c.flow, field: 'operator_code' }]);
  checkAmountRange(amount, 'send_amount');
  const rule = c.pricing[c.flow];
  checkFeeRule(rule, `pricing.${c.flow}`); // operator input: a broken rule is a refusal naming it
  const fee = feeFor(amount, rule);
  const receive = amount - fee.total;
  checkNet(receive, 'send_amount');
  const currency = op.currency;
  const effects: WalletEffect[] = c.flow === 'payin'
    ? [{ currency, when: 'completed', available_delta: sign(receive), reserved_delta: '0', description: 'receive_amount is credited to available when the payin completes' }]
    : [
      { currency, when: 'created', available_delta: neg(amount), reserved_delta: sign(amount), description: 'send_amount moves from available to reserved when the payout is created' },
      { currency, when: 'completed', available_delta: '0', reserved_delta: neg(amount), description: 'the reservation is debited when the payout completes' },
      { currency, when: 'failed', available_delta: sign(amount), reserved_delta: neg(amount), description: 'the reservation is released back to available if the payout fails' },
    ];
  return {
    quote_id: c.quoteId, merchant_id: c.merchantId, customer_id: c.customerId, flow_type: c.flow,
    send_amount: formatMoney(amount), send_currency: currency, receive_amount: formatMoney(receive), receive_currency: currency,
    total_fee: formatMoney(fee.total), country_code: op.country, operator_code: op.code, rail_type: 'mobile_money',
    corridor_code: null, corridor_type: null,
    payer_operator_code: c.flow === 'payin' ? op.code : null, recipient_operator_code: c.flow === 'payout' ? op.code : null,
    payin_amount: null, payin_currency: null, payout_amount: null, payout_currency: null,
    pricing: pricingOf(rule, fee, currency, 'send'), wallet_impact: { effects }, operator_availability: availability, expires_at: c.expiresAt, at: c.at,
  };
}

interface TransferQuoteRequest {
  payerOperatorCode: string;
  recipientOperatorCode: string;
  corridorCode: string | undefined;
  payinCurrency: string;
  payoutCurrency: string;
  /** Exactly one of the two. */
  payinAmount: string | undefined;
  payoutAmount: string | undefined;
}

function transferOperator(code: string, currency: string, field: string, currencyField: string): OperatorInfo {
  const op = operator(code);
  if (!op) refuse('unsupported_route', `unknown operator ${code}`, [{ field, message: 'is not a sandbox operator' }]);
  if (op!.currency !== currency) {
    refuse('unsupported_route', `${code} works in ${op!.currency}, not ${currency}`, [{ field: currencyField, message: `must be ${op!.currency} for ${code}` }]);
  }
  return op!;
}

function priceTransfer(c: QuoteCommon & TransferQuoteRequest): QuoteCreated {
  const fixedPayout = c.payoutAmount !== undefined;
  invariant(fixedPayout !== (c.payinAmount !== undefined), 'exactly one of payin_amount and payout_amount');
  const stated = fixedPayout ? parseAmount(c.payoutAmount!, 'payout_amount') : parseAmount(c.payinAmount!, 'payin_amount');
  const payer = transferOperator(c.payerOperatorCode, c.payinCurrency, 'payer_operator_code', 'payin_currency');
  const recipient = transferOperator(c.recipientOperatorCode, c.payoutCurrency, 'recipient_operator_code', 'payout_currency');
  const corridor = corridorCode(payer.country as CountryCode, recipient.country as CountryCode);
  if (c.corridorCode !== undefined && c.corridorCode !== corridor) {
    refuse('unsupported_route', `corridor_code ${c.corridorCode} does not match the operators (${corridor})`, [
      { field: 'corridor_code', message: `must be ${corridor} for these operators` },
    ]);
  }
  if (!c.routing.corridors.includes(corridor)) refuse('corridor_not_configured', `Corridor ${corridor} is not configured on this account`);
  const availability = requireAvailable(c.availability, [
    { operatorCode: payer.code, flow: 'payin', field: 'payer_operator_code' },
    { operatorCode: recipient.code, flow: 'payout', field: 'recipient_operator_code' },
  ]);
  const rule = c.pricing.transfer;
  checkFeeRule(rule, 'pricing.transfer');
  let payin: Money;
  let payout: Money;
  if (fixedPayout) {
    checkAmountRange(stated, 'payout_amount');
    const gross = grossForNet(stated, rule);
    if (gross === undefined || gross > MAX_AMOUNT) refuse('amount_out_of_range', 'payout_amount needs a payin above the limit', [{ field: 'payout_amount', message: 'the payin it needs is out of range' }]);
    payin = gross!;
    payout = stated;
  } else {
    checkAmountRange(stated, 'payin_amount');
    payin = stated;
    payout = payin - feeFor(payin, rule).total; // FX XAF↔XOF is exactly 1
    checkNet(payout, 'payin_amount');
  }
  const fee = feeFor(payin, rule);
  invariant(payin - fee.total === payout, 'transfer amounts must balance');
  const inCur = payer.currency;
  const outCur = recipient.currency;
  const effects: WalletEffect[] = [
    { currency: outCur, when: 'created', available_delta: neg(payout), reserved_delta: sign(payout), description: 'payout_amount moves from available to reserved when the transfer is created' },
    { currency: inCur, when: 'collection_completed', available_delta: sign(payin - fee.total), reserved_delta: '0', description: 'payin_amount − total_fee is credited to available when the collection completes' },
    { currency: outCur, when: 'collection_failed', available_delta: sign(payout), reserved_delta: neg(payout), description: 'the reservation is released if the collection fails' },
    { currency: outCur, when: 'disbursement_completed', available_delta: '0', reserved_delta: neg(payout), description: 'the reservation is debited when the disbursement completes' },
    { currency: outCur, when: 'disbursement_failed', available_delta: sign(payout), reserved_delta: neg(payout), description: 'the reservation is released if the disbursement fails (a relaunch reserves again)' },
  ];
  return {
    quote_id: c.quoteId, merchant_id: c.merchantId, customer_id: c.customerId, flow_type: 'transfer',
    send_amount: formatMoney(payin), send_currency: inCur, receive_amount: formatMoney(payout), receive_currency: outCur,
    total_fee: formatMoney(fee.total), country_code: payer.country, operator_code: payer.code, rail_type: 'mobile_money',
    corridor_code: corridor, corridor_type: payer.country === recipient.country ? 'domestic' : 'cross_border',
    payer_operator_code: payer.code, recipient_operator_code: recipient.code,
    payin_amount: formatMoney(payin), payin_currency: inCur, payout_amount: formatMoney(payout), payout_currency: outCur,
    pricing: pricingOf(rule, fee, inCur, fixedPayout ? 'receive' : 'send'), wallet_impact: { effects }, operator_availability: availability,
    expires_at: c.expiresAt, at: c.at,
  };
}

/** What the merchant asks a quote for: a payin or payout leg, or a transfer. */
export type QuoteRequest =
  | ({ flow: 'payin' | 'payout' } & QuoteLeg)
  | ({ flow: 'transfer' } & TransferQuoteRequest);

export type CreateQuote = QuoteCommon & QuoteRequest;

/** The quote priced for the request (what `quote.created` records). */
export function priceQuote(c: CreateQuote): QuoteCreated {
  return c.flow === 'transfer' ? priceTransfer(c) : priceLeg(c);
}
