// The sandbox platform's coverage (CONTRACT.md §3): countries, currencies, operators. Validation,
// quotes, routing and GET /operators all read this one table.
export type Currency = 'XAF' | 'XOF';
export type CountryCode = 'CM' | 'SN' | 'BJ' | 'TG' | 'CI';
export type Flow = 'payin' | 'payout' | 'transfer';

export const COUNTRIES: Record<CountryCode, { currency: Currency; dialCode: string; name: string }> = {
  CM: { currency: 'XAF', dialCode: '+237', name: 'Cameroon' },
  SN: { currency: 'XOF', dialCode: '+221', name: 'Senegal' },
  BJ: { currency: 'XOF', dialCode: '+229', name: 'Benin' },
  TG: { currency: 'XOF', dialCode: '+228', name: 'Togo' },
  CI: { currency: 'XOF', dialCode: '+225', name: "Cote d'Ivoire" },
};

export interface OperatorInfo {
  code: string;
  name: string;
  country: CountryCode;
  currency: Currency;
  railType: 'mobile_money';
  requiresOtp: boolean;
}

const op = (code: string, name: string, country: CountryCode, requiresOtp = false): OperatorInfo => ({
  code, name, country, currency: COUNTRIES[country].currency, railType: 'mobile_money', requiresOtp,
});

export const OPERATORS: readonly OperatorInfo[] = [
  op('CM_MTN_MOMO', 'MTN Mobile Money', 'CM'),
  op('CM_ORANGE_MOMO', 'Orange Money', 'CM'),
  op('SN_ORANGE_MOMO', 'Orange Money', 'SN', true),
  op('SN_WAVE_MOMO', 'Wave', 'SN'),
  op('SN_FREE_MOMO', 'Free Money', 'SN'),
  op('BJ_MTN_MOMO', 'MTN Mobile Money', 'BJ'),
  op('BJ_MOOV_MOMO', 'Moov Money', 'BJ'),
  op('TG_TOGOCOM_MOMO', 'T-Money', 'TG'),
  op('TG_MOOV_MOMO', 'Flooz', 'TG'),
  op('CI_ORANGE_MOMO', 'Orange Money', 'CI', true),
  op('CI_MTN_MOMO', 'MTN Mobile Money', 'CI'),
  op('CI_MOOV_MOMO', 'Moov Money', 'CI'),
  op('CI_WAVE_MOMO', 'Wave', 'CI'),
];

export const OPERATOR_CODES = OPERATORS.map((o) => o.code);
export const COUNTRY_CODES = Object.keys(COUNTRIES) as CountryCode[];

export function operator(code: string): OperatorInfo | undefined {
  return OPERATORS.find((o) => o.code === code);
}

/** Sandbox limits per transaction, in whole francs (CONTRACT.md §3). */
export const MIN_AMOUNT = 100n;
export const MAX_AMOUNT = 1_000_000n;

/** Every corridor the platform could offer: payer country/currency to recipient country/currency. */
export function corridorCode(from: CountryCode, to: CountryCode): string {
  return `${from}-${to}-${COUNTRIES[from].currency}-${COUNTRIES[to].currency}`;
}

export const ALL_CORRIDORS: string[] = COUNTRY_CODES.flatMap((a) => COUNTRY_CODES.map((b) => corridorCode(a, b)));

export function parseCorridor(code: string): { from: CountryCode; to: CountryCode } | undefined {
  const m = /^([A-Z]{2})-([A-Z]{2})-([A-Z]{3})-([A-Z]{3})$/.exec(code);
  if (!m) return undefined;
  const [, from, to] = m as unknown as [string, CountryCode, CountryCode];
  if (!(from in COUNTRIES) || !(to in COUNTRIES)) return undefined;
  return corridorCode(from, to) === code ? { from, to } : undefined;
}
