// The payer's form (CONTRACT §16): its fields as posted, checked here first so that each problem is
// told beside its field in the page's language, before anything is created. The command checks them
// again (its refusals are mapped back onto the same fields by the route).
import { randomUUID } from 'node:crypto';
import { COUNTRIES, COUNTRY_CODES, operator, OPERATORS, type CountryCode, type OperatorInfo } from '../domain/catalogue.ts';
import { normalisePhone } from '../domain/phone.ts';
import { DomainError } from '../domain/errors.ts';
import type { MessageKey } from '../i18n/catalogue.ts';
import type { PayableLink } from './reads.ts';
import { isStorableText } from '../api/storable-text.ts';

export const FIELDS = ['country_code', 'operator_code', 'phone', 'name', 'otp'] as const;
export type FieldName = (typeof FIELDS)[number];
export type FieldErrors = Partial<Record<FieldName, MessageKey>>;

/** Each field's message when it is refused, whatever the reason (the field's hint says what it takes). */
export const FIELD_ERRORS: Record<FieldName, MessageKey> = {
  country_code: 'pay.error.country', operator_code: 'pay.error.operator', phone: 'pay.error.phone', name: 'pay.error.name', otp: 'pay.error.otp',
};

/** The hidden field that makes a double submit one payin (the command derives the payin's id from it). */
export const ATTEMPT_FIELD = 'attempt_id';
export const newAttemptId = (): string => randomUUID();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const NAME_LENGTH = { min: 2, max: 100 };
const OTP = /^[0-9]{4,8}$/;

export interface FormInput {
  country_code: string;
  operator_code: string;
  phone: string;
  name: string;
  otp: string;
  attempt_id: string;
}

/** The countries a link can be paid from: those whose currency is the link's. */
export const countriesFor = (currency: string): CountryCode[] => COUNTRY_CODES.filter((c) => COUNTRIES[c].currency === currency);
export const operatorsOf = (country: CountryCode): OperatorInfo[] => OPERATORS.filter((o) => o.country === country);

/**
 * The posted fields: strings only, each bounded (anything longer is not a value we take). Text the
 * database cannot store (a NUL) reads as nothing, so its field is refused as missing: it reached the
 * payer's customer event and was a 500.
 */
export function readForm(body: unknown): FormInput {
  const b = (body ?? {}) as Record<string, unknown>;
  const text = (name: string) => {
    const v = b[name];
    return typeof v === 'string' && isStorableText(v) ? v.slice(0, 200) : '';
  };
  return {
    country_code: text('country_code'), operator_code: text('operator_code'), phone: text('phone'),
    name: text('name'), otp: text('otp'), attempt_id: text(ATTEMPT_FIELD),
  };
}

export const validAttempt = (id: string) => UUID.test(id);

/** What the command is given, once every field is right. */
export interface PaymentFields {
  countryCode: CountryCode;
  operatorCode: string;
  phone: string;
  name: string | undefined;
  otp: string | undefined;
}

function checkPhone(raw: string, country: CountryCode | undefined): string | undefined {
  if (country === undefined) return undefined;
  try {
    return normalisePhone(raw, country);
  } catch (err) {
    if (err instanceof DomainError) return undefined;
    throw err;
  }
}

/** Every field's problem, or the command's fields. */
export function checkForm(link: PayableLink, f: FormInput): { errors: FieldErrors } | { fields: PaymentFields } {
  const errors: FieldErrors = {};
  const country = countriesFor(link.currency).find((c) => c === f.country_code);
  if (!country) errors.country_code = FIELD_ERRORS.country_code;
  const op = operator(f.operator_code);
  if (!op || (country !== undefined && op.country !== country) || !countriesFor(link.currency).includes(op.country)) errors.operator_code = FIELD_ERRORS.operator_code;
  const phone = checkPhone(f.phone, country);
  if (phone === undefined) errors.phone = FIELD_ERRORS.phone;
  const name = f.name.trim();
  if (!link.hasCustomer && (name.length < NAME_LENGTH.min || name.length > NAME_LENGTH.max)) errors.name = FIELD_ERRORS.name;
  const otp = f.otp.trim();
  if (op?.requiresOtp && !OTP.test(otp)) errors.otp = FIELD_ERRORS.otp;
  if (Object.keys(errors).length > 0 || !country || !op || phone === undefined) return { errors };
  return {
    fields: {
      countryCode: country, operatorCode: op.code, phone,
      name: link.hasCustomer ? undefined : name,
      // Only an operator that collects with a code is given one (a code typed for another is not sent).
      otp: op.requiresOtp ? otp : undefined,
    },
  };
}
