// Merchant commands on payment links (CONTRACT §16), and the payer's payment through one.
//
// payThroughLink (called by the payer's page, pay/): the page's fields are checked first, so a bad
// field creates nothing; then a payin quote for the link's amount (the payer pays exactly that
// amount: the fee comes out of it, per the merchant's pricing, as for any payin), the payer's
// customer (the link's, or one made from the page's name, phone and country), and the payin, which
// takes its place on the link in the same atomic append as its create (commands/payins.ts). Every id
// is derived from (link, attempt): the same attempt twice creates one of each, and answers it.
import type { Services } from './services.ts';
import * as L from '../domain/payment-link.ts';
import * as P from '../domain/payin.ts';
import { DomainError } from '../domain/errors.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { streams } from './streams.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import { loadMerchant, requireCustomer } from './lookups.ts';
import { createQuote } from './quotes.ts';
import { createCustomer } from './customers.ts';
import { createPayin } from './payins.ts';
import { asFormError, attemptIds, attemptQuoteId, checkPayer, type CheckedPayer } from './payment-link-attempts.ts';

/**
 * Creates the link `linkId` (the idempotency claim's resource id); when its stream exists already
 * (a retry that took over the claim), answers the existing link. `customerId` must be the merchant's.
 */
export async function createPaymentLink(
  s: Services,
  c: {
    linkId: string; merchantId: string; amount: string; currency: string; description: string; customerId: string | null;
    expiresAt: string | null; maxPayments: number | null; metadata: Record<string, string>; fresh?: boolean;
  },
  meta: EventMetadata,
): Promise<Created<L.PaymentLinkState>> {
  const streamId = streams.paymentLink(c.linkId);
  const earlier = await createdEarlier(s.aggregates, streamId, L.paymentLinkDecider, c.fresh);
  if (earlier) return earlier;
  if (c.customerId !== null) await requireCustomer(s, c.merchantId, c.customerId);
  const { fresh: _fresh, ...fields } = c;
  const { state, events, append } = await s.aggregates.execute(streamId, L.paymentLinkDecider,
    (): L.PaymentLinkCommand => ({ type: 'CreatePaymentLink', data: { ...fields, at: s.clock.now().toISOString() } }), meta);
  await s.awaitReadModels(append?.position);
  return events.length === 0 && state.exists ? existing(state) : created(state);
}

/** The link set inactive (again: unchanged). Another merchant's link is not found. */
export async function deactivatePaymentLink(s: Services, c: { linkId: string; merchantId: string }, meta: EventMetadata): Promise<L.PaymentLinkState> {
  const { state, append } = await s.aggregates.execute(streams.paymentLink(c.linkId), L.paymentLinkDecider,
    (): L.PaymentLinkCommand => ({ type: 'DeactivatePaymentLink', data: { merchantId: c.merchantId, at: s.clock.now().toISOString() } }), meta);
  await s.awaitReadModels(append?.position);
  return state;
}

export interface PayThroughLink {
  linkId: string;
  /** The page's form's random id: the same attempt posted twice creates one payin. */
  attemptId: string;
  countryCode: string;
  operatorCode: string;
  phone: string;
  name: string | undefined;
  otp: string | undefined;
}

const MAX_ATTEMPT_ID_LENGTH = 200;

async function loadLink(s: Services, linkId: string): Promise<L.PaymentLinkState> {
  const { state } = await s.aggregates.load(streams.paymentLink(linkId), L.paymentLinkDecider);
  if (!state.exists) throw new DomainError('not_found', 'Payment link not found');
  return state;
}

/**
 * One payin for the link's amount from the payer's wallet, or the one this attempt already made
 * (`existed`). Refusals: `not_found`; `payment_link_closed` (410, the status in the details);
 * `payment_link_busy` (409, every place held by pending payins: retry later); a field refusal names
 * the form's field (country_code, operator_code, phone, name, otp) and creates nothing.
 */
export async function payThroughLink(
  s: Services,
  c: PayThroughLink,
  meta: EventMetadata,
): Promise<{ payinId: string; merchantId: string; existed: boolean }> {
  if (c.attemptId === '' || c.attemptId.length > MAX_ATTEMPT_ID_LENGTH) {
    throw new DomainError('bad_request', 'attempt_id is invalid', [{ field: 'attempt_id', message: `must be 1 to ${MAX_ATTEMPT_ID_LENGTH} characters` }]);
  }
  const ids = attemptIds(c.linkId, c.attemptId);
  const link = await loadLink(s, c.linkId);
  const merchantId = link.created!.merchant_id;
  const earlier = await s.aggregates.load(streams.payin(ids.payinId), P.payinDecider);
  if (earlier.state.exists) return { payinId: ids.payinId, merchantId, existed: true };
  // Closed or full: refused before anything is made (decided again on the link when the payin commits).
  const now = s.clock.now();
  L.paymentLinkDecider.decide({ type: 'StartPayment', data: { payinId: ids.payinId, now, at: now.toISOString() } }, link);
  L.requireMerchantCollecting((await loadMerchant(s, merchantId)).status);
  const payer = checkPayer(c, link.created!);
  try {
    const payin = await payOnce(s, link.created!, payer, c.attemptId, meta);
    return { payinId: ids.payinId, merchantId, existed: payin.existed };
  } catch (err) {
    throw asFormError(err);
  }
}

/** The quote, the payer's customer and the payin of one attempt, each created once under its derived id. */
async function payOnce(
  s: Services, link: L.PaymentLinkCreated, payer: CheckedPayer, attemptId: string, meta: EventMetadata,
): Promise<Created<P.PayinState>> {
  const ids = attemptIds(link.payment_link_id, attemptId);
  const merchantId = link.merchant_id;
  const quoteId = attemptQuoteId(link.payment_link_id, attemptId, payer.operatorCode);
  // The quote before the customer: a quote refused (operator closed or not enabled) leaves no customer behind.
  await createQuote(s, {
    quoteId, merchantId, customerId: link.customer_id,
    request: { flow: 'payin', countryCode: payer.countryCode, operatorCode: payer.operatorCode, railType: 'mobile_money', sendAmount: link.amount, sendCurrency: link.currency },
  }, meta);
  const customerId = link.customer_id ?? (await createCustomer(s, {
    customerId: ids.customerId, merchantId, customerType: 'individual',
    profile: { ...namesOf(payer.name!), phone: payer.phone, country_code: payer.countryCode },
  }, meta)).state.id;
  return createPayin(s, {
    payinId: ids.payinId, merchantId, customerId, quoteId, paymentLinkId: link.payment_link_id,
    source: { country_code: payer.countryCode, rail_type: 'mobile_money', operator_code: payer.operatorCode, phone: payer.phone },
    otp: payer.otp, metadata: link.metadata,
  }, meta);
}

/**
 * An individual customer needs a first and a last name; the page asks one name: its last word is
 * the last name, the words before it the first name (a single word is both).
 */
function namesOf(name: string): { first_name: string; last_name: string } {
  const words = name.split(/\s+/);
  if (words.length === 1) return { first_name: name, last_name: name };
  return { first_name: words.slice(0, -1).join(' '), last_name: words.at(-1)! };
}

/**
 * A link's payin reached its outcome: its place is freed (failed) or used (completed), once (the
 * outcome may arrive again: it then decides nothing). A payin of no link: nothing to do.
 */
export async function endLinkPayment(s: Services, payinId: string, outcome: L.PaymentOutcome, meta: EventMetadata): Promise<void> {
  const { state: payin } = await s.aggregates.peek(streams.payin(payinId), P.payinDecider);
  const linkId = payin.created?.payment_link_id;
  if (linkId === undefined) return;
  await s.aggregates.execute(streams.paymentLink(linkId), L.paymentLinkDecider,
    (): L.PaymentLinkCommand => ({ type: 'EndPayment', data: { payinId, outcome, at: s.clock.now().toISOString() } }), meta);
}
