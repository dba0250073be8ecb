// What payins, payouts and quotes share: rail parties, status history, the wallet impact statement.
import { COUNTRIES, operator, type CountryCode } from './catalogue.ts';
import { refuse, type ErrorDetail, DomainError } from './errors.ts';
import { normalisePhone } from './phone.ts';
import type { Failure, FailureReason, ProviderFailure } from './failure-reasons.ts';

export type PaymentStatus = 'created' | 'pending' | 'completed' | 'failed';

export interface HistoryEntry {
  status: PaymentStatus;
  reason: string | null;
  created_at: string;
}

/** Seed "Rail party": where money is collected from or paid to. */
export interface RailParty {
  country_code: string;
  rail_type: string;
  phone?: string;
  operator_code?: string;
  bank_name?: string;
  bank_code?: string;
  account_name?: string;
  account_number?: string;
}

/** Seed "Recipient": a rail party plus who the recipient is. */
export interface Recipient extends RailParty {
  recipient_type: 'individual' | 'business';
  first_name?: string;
  last_name?: string;
  business_name?: string;
  email?: string;
  recipient_nationality_code?: string;
  address_line1?: string;
  city?: string;
}

/**
 * One effect of a quote or payment on the merchant's wallet, at one moment of its life:
 * `available_delta` and `reserved_delta` are signed decimal strings ("-5000", "0", "4925").
 */
export interface WalletEffect {
  currency: string;
  /**
   * When it applies. Payins and payouts: `created`, `completed`, `failed`. Transfers: `created`,
   * `collection_completed`, `collection_failed`, `disbursement_completed`, `disbursement_failed`.
   */
  when: string;
  available_delta: string;
  reserved_delta: string;
  description: string;
}

/** The effect per currency of a quote (what will happen) or a payment (with `applied` per effect). */
export interface WalletImpact {
  effects: WalletEffect[];
}

/**
 * Checks a payment's rail party against its quote and normalises it: same country, rail and
 * operator (else `quote_mismatch`); a mobile-money party needs `phone` and `operator_code` (else
 * `bad_request` naming the field); the phone is validated for the party's country and kept in E.164.
 */
export function checkParty<P extends RailParty>(
  party: P,
  expected: { country_code: string; operator_code: string; rail_type: string },
  field: string,
): P {
  const missing: ErrorDetail[] = [];
  if (party.rail_type === 'mobile_money') {
    if (party.phone === undefined) missing.push({ field: `${field}.phone`, message: 'is required for mobile_money' });
    if (party.operator_code === undefined) missing.push({ field: `${field}.operator_code`, message: 'is required for mobile_money' });
  }
  if (missing.length > 0) throw new DomainError('bad_request', `${field} is incomplete`, missing);
  const mismatched = (['country_code', 'rail_type', 'operator_code'] as const).filter((k) => party[k] !== expected[k]);
  if (mismatched.length > 0) {
    refuse('quote_mismatch', `${field} does not match the quote (${mismatched.join(', ')})`, mismatched.map((k) => ({
      field: `${field}.${k}`, message: `must be ${expected[k]}, as quoted`,
    })));
  }
  const op = operator(party.operator_code!);
  if (!op || !(party.country_code in COUNTRIES)) refuse('unsupported_route', `${field}: unknown operator or country`);
  const phone = normalisePhone(party.phone!, party.country_code as CountryCode, `${field}.phone`);
  return { ...party, phone };
}

/**
 * The checks of a party that need no quote (checkParty makes them again on a valid body): a
 * mobile-money party's phone and operator, the phone for the party's own country. On a body as sent
 * (any shape; other types are the schema's to report): the API runs this beside a schema error, so
 * one answer lists every problem (issue 31).
 */
export function partyProblems(party: unknown, field: string): ErrorDetail[] {
  if (!party || typeof party !== 'object') return [];
  const p = party as Record<string, unknown>;
  const details: ErrorDetail[] = [];
  if (p.rail_type === 'mobile_money') {
    if (p.phone === undefined) details.push({ field: `${field}.phone`, message: 'is required for mobile_money' });
    if (p.operator_code === undefined) details.push({ field: `${field}.operator_code`, message: 'is required for mobile_money' });
  }
  if (typeof p.phone === 'string' && typeof p.country_code === 'string' && Object.hasOwn(COUNTRIES, p.country_code)) {
    try {
      normalisePhone(p.phone, p.country_code as CountryCode, `${field}.phone`);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      details.push(...(err.details ?? [{ field: `${field}.phone`, message: err.message }]));
    }
  }
  return details;
}

/** The lifecycle every payment shares (payins and payouts): created → pending → completed | failed. */
export interface PaymentLifecycle {
  status: PaymentStatus;
  provider_reference: string | null;
  /** Why it failed, in the merchant's words (CONTRACT §15); null unless failed. */
  failure_reason: FailureReason | null;
  /** The provider's own account of the failure; null unless failed, or when the provider is not known. */
  provider_failure: ProviderFailure | null;
  history: HistoryEntry[];
  updated_at: string;
  submitted_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
}

/**
 * A provider outcome for a leg: completed, or failed with the provider's code (`reason`) and, when
 * the provider told it (commands/leg-outcomes.ts), the failure in the merchant's words beside the
 * provider's own account; without it the failure is read from the code (failure-reasons.ts).
 */
export type LegOutcome =
  | { outcome: 'completed'; providerReference: string | null }
  | { outcome: 'failed'; providerReference: string | null; reason: string; failure?: Failure };
