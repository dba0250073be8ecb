// One payer's attempt on a payment link's page (CONTRACT §16): the ids it creates, derived from the
// link and the attempt id the page puts in its form, so a double submit (the same attempt twice)
// creates one quote, one customer and one payin; and the page's fields checked before anything is
// created, each problem named by the form's field.
import { createHash } from 'node:crypto';
import { COUNTRIES, operator, type CountryCode } from '../domain/catalogue.ts';
import { DomainError, type ErrorDetail } from '../domain/errors.ts';
import { normalisePhone } from '../domain/phone.ts';
import type { PaymentLinkCreated } from '../domain/payment-link.ts';

export interface AttemptIds {
  payinId: string;
  customerId: string;
}

/** A UUID (v4 layout) of SHA-256 over the link, the attempt and what the id is for. */
function derivedUuid(linkId: string, attemptId: string, purpose: string): string {
  const b = createHash('sha256').update(`payment-link-attempt\n${linkId}\n${attemptId}\n${purpose}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function attemptIds(linkId: string, attemptId: string): AttemptIds {
  return {
    payinId: derivedUuid(linkId, attemptId, 'payin'),
    customerId: derivedUuid(linkId, attemptId, 'customer'),
  };
}

/**
 * The attempt's quote for the operator chosen: a double submit (the same form) makes one quote, and
 * the same attempt sent again with another operator (after a refusal that left its first quote
 * unused) gets a quote of that operator; one id per attempt bound it to its first operator forever.
 */
export const attemptQuoteId = (linkId: string, attemptId: string, operatorCode: string): string =>
  derivedUuid(linkId, attemptId, `quote\n${operatorCode}`);

export interface PayerInput {
  countryCode: string;
  operatorCode: string;
  phone: string;
  name: string | undefined;
  otp: string | undefined;
}

export interface CheckedPayer {
  countryCode: CountryCode;
  operatorCode: string;
  /** E.164. */
  phone: string;
  /** Trimmed; undefined when the link has its customer. */
  name: string | undefined;
  otp: string | undefined;
}

const MAX_NAME_LENGTH = 200;
const OTP = /^[0-9]{4,8}$/;

function countryProblem(countryCode: string, link: PaymentLinkCreated): ErrorDetail | undefined {
  if (!Object.hasOwn(COUNTRIES, countryCode)) return { field: 'country_code', message: 'is not a covered country (CM, SN, BJ, TG, CI)' };
  const currency = COUNTRIES[countryCode as CountryCode].currency;
  if (currency !== link.currency) return { field: 'country_code', message: `pays in ${currency}; this link is in ${link.currency}` };
  return undefined;
}

function phoneProblem(phone: string, country: CountryCode | undefined): { detail?: ErrorDetail; phone?: string } {
  try {
    return { phone: normalisePhone(phone, country, 'phone') };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { detail: err.details?.[0] ?? { field: 'phone', message: err.message } };
  }
}

function nameProblem(name: string | undefined, link: PaymentLinkCreated): ErrorDetail | undefined {
  if (link.customer_id !== null) return undefined;
  const trimmed = name?.trim() ?? '';
  if (trimmed === '') return { field: 'name', message: 'is required' };
  if (trimmed.length > MAX_NAME_LENGTH) return { field: 'name', message: `must be at most ${MAX_NAME_LENGTH} characters` };
  return undefined;
}

/**
 * The page's fields, checked before anything is created: one detail per problem, each naming its
 * form field. Only a missing OTP (every other field fine) is `otp_required`, as on POST /payins.
 */
export function checkPayer(input: PayerInput, link: PaymentLinkCreated): CheckedPayer {
  const details: ErrorDetail[] = [];
  const country = countryProblem(input.countryCode, link);
  if (country) details.push(country);
  const countryCode = country ? undefined : (input.countryCode as CountryCode);
  const op = operator(input.operatorCode);
  if (!op) details.push({ field: 'operator_code', message: 'is not a known operator' });
  else if (countryCode !== undefined && op.country !== countryCode) details.push({ field: 'operator_code', message: `does not operate in ${countryCode}` });
  const phone = phoneProblem(input.phone, countryCode);
  if (phone.detail) details.push(phone.detail);
  const name = nameProblem(input.name, link);
  if (name) details.push(name);
  const otp = input.otp === undefined || input.otp.trim() === '' ? undefined : input.otp.trim();
  if (otp !== undefined && !OTP.test(otp)) details.push({ field: 'otp', message: 'must be 4 to 8 digits' });
  if (details.length > 0) throw new DomainError('bad_request', 'The payment form is invalid', details);
  if (op!.requiresOtp && otp === undefined) {
    throw new DomainError('otp_required', `${op!.code} requires a one-time password to collect`, [{ field: 'otp', message: 'is required for this operator' }]);
  }
  return { countryCode: countryCode!, operatorCode: op!.code, phone: phone.phone!, name: link.customer_id === null ? input.name!.trim() : undefined, otp };
}

/** The quote's and the payin's field names as the page's form names them. */
const FORM_FIELDS: Record<string, string> = {
  country_code: 'country_code',
  'source.country_code': 'country_code',
  operator_code: 'operator_code',
  'source.operator_code': 'operator_code',
  'source.phone': 'phone',
  'source.phone_number': 'phone',
  phone: 'phone',
  first_name: 'name',
  last_name: 'name',
  otp: 'otp',
};

/** Refusals that concern the operator chosen (closed, not enabled for this merchant, another route). */
const OPERATOR_REFUSALS = new Set(['operator_unavailable', 'operator_not_enabled', 'unsupported_route', 'provider_unavailable']);

/**
 * A refusal from the quote, customer or payin command, its details renamed to the form's fields
 * (an operator refusal without details names operator_code); anything else as it was.
 */
export function asFormError(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  const details = err.details?.map((d) => ({ field: FORM_FIELDS[d.field] ?? d.field, message: d.message }));
  if (details && details.length > 0) return new DomainError(err.code, err.message, details);
  if (OPERATOR_REFUSALS.has(err.code)) return new DomainError(err.code, err.message, [{ field: 'operator_code', message: err.message }]);
  return err;
}
