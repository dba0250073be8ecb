// Phone numbers of the five covered countries, normalised to E.164 (CONTRACT.md §3). Pure: used by
// customers and by the rail parties of payins, payouts and transfers.
//
// Validation uses libphonenumber-js's default metadata: the country's calling code, its possible
// lengths and its general number pattern. (The "max" metadata would also check every operator
// range, which refuses sandbox test numbers and ranges opened after the library was built.)
//
// Benin moved from 8 to 10 digits on 30 November 2024: every existing number was prefixed with `01`
// (+229 97 12 34 56 became +229 01 97 12 34 56). libphonenumber-js knows only the new plan, so an
// 8-digit number is handled here: it is accepted when its 10-digit successor (`01` + the same
// digits) is a valid Benin number, and kept as sent (E.164 +229 followed by the 8 digits), because
// the merchant sent that number and the sandbox reads its last digits.
import { parsePhoneNumberFromString, type CountryCode as LibCountryCode } from 'libphonenumber-js';
import { COUNTRIES, type CountryCode } from './catalogue.ts';
import { DomainError } from './errors.ts';

/** What a phone field may contain before parsing: digits, an optional leading +, spaces, dots, dashes, parentheses. */
const RAW_PHONE = /^\+?[0-9][0-9 ().-]{3,30}$/;
const BENIN_LEGACY_DIGITS = /^[0-9]{8}$/;

const CALLING_CODES = new Map<string, CountryCode>(
  (Object.keys(COUNTRIES) as CountryCode[]).map((c) => [COUNTRIES[c].dialCode.slice(1), c]),
);

export class InvalidPhone extends DomainError {
  constructor(field: string, reason: string) {
    super('bad_request', `Invalid phone number: ${reason}`, [{ field, message: reason }]);
  }
}

/**
 * Returns `raw` as an E.164 number of one of the five covered countries, or throws a `bad_request`
 * DomainError whose detail names `field`.
 *
 * - `+…` (E.164, spaces and dashes allowed): must be valid and, when `country` is given, belong to it.
 * - a national form (no `+`): read as a number of `country`; refused when no country is given.
 */
export function normalisePhone(raw: string, country: CountryCode | undefined, field = 'phone'): string {
  const text = raw.trim();
  if (!RAW_PHONE.test(text)) throw new InvalidPhone(field, 'must be an E.164 number (+237…) or a national number');
  const international = text.startsWith('+');
  if (!international && country === undefined) {
    throw new InvalidPhone(field, 'a national number needs a country: use the E.164 form (+…)');
  }
  const parsed = parsePhoneNumberFromString(text, international ? undefined : (country as LibCountryCode));
  if (!parsed) throw new InvalidPhone(field, 'is not a phone number');

  const numberCountry = CALLING_CODES.get(parsed.countryCallingCode);
  if (numberCountry === undefined) {
    throw new InvalidPhone(field, `+${parsed.countryCallingCode} is not a supported country (CM, SN, BJ, TG, CI)`);
  }
  if (country !== undefined && numberCountry !== country) {
    throw new InvalidPhone(field, `is a ${numberCountry} number, expected a ${country} number (${COUNTRIES[country].dialCode})`);
  }
  if (parsed.ext) throw new InvalidPhone(field, 'extensions are not accepted');

  const national = parsed.nationalNumber;
  if (numberCountry === 'BJ' && BENIN_LEGACY_DIGITS.test(national)) {
    const successor = parsePhoneNumberFromString(`+22901${national}`);
    if (successor?.isValid()) return `+229${national}`;
    throw new InvalidPhone(field, 'is not a valid Benin number');
  }
  if (!parsed.isValid()) throw new InvalidPhone(field, `is not a valid ${COUNTRIES[numberCountry].name} number`);
  return parsed.number;
}
