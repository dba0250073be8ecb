// The customer aggregate (stream `customer-<id>`): the merchant's record of a person or business,
// created once; the KYC review (domain/kyc.ts) adds its events to the same stream and moves `kycStatus`.
import { DomainError, invariant, type ErrorDetail } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { COUNTRIES, type CountryCode } from './catalogue.ts';
import { normalisePhone } from './phone.ts';
import { latestDateAt, isCalendarDate } from './dates.ts';
import { decideKyc, evolveKyc, initialKycState, type KycCommand, type KycEvent, type KycState, type KycStatus } from './kyc.ts';
// The KYC lifecycle lives with the KYC decisions (kyc.ts); customers show it.
export { KYC_STATUSES, type KycStatus } from './kyc.ts';

export const CUSTOMER_TYPES = ['individual', 'retail', 'business'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];


/** The identity fields each type must carry (the seed's table); the API schema is built from it too. */
export const REQUIRED_IDENTITY_FIELDS: Record<CustomerType, ReadonlyArray<keyof CustomerProfile>> = {
  individual: ['first_name', 'last_name'],
  retail: ['first_name', 'last_name', 'id_number'],
  business: ['business_name'],
};

/** Everything a merchant may record about a customer, as sent (the phone normalised to E.164). */
export interface CustomerProfile {
  first_name?: string;
  last_name?: string;
  business_name?: string;
  id_number?: string;
  phone?: string;
  email?: string;
  country_code?: string;
  nationality_code?: string;
  /** YYYY-MM-DD */
  date_of_birth?: string;
  address_line1?: string;
  city?: string;
  occupation?: string;
  source_of_funds?: string;
  external_ref?: string;
  metadata?: Record<string, string>;
}

export const PROFILE_FIELDS = [
  'first_name', 'last_name', 'business_name', 'id_number', 'phone', 'email', 'country_code', 'nationality_code',
  'date_of_birth', 'address_line1', 'city', 'occupation', 'source_of_funds', 'external_ref', 'metadata',
] as const satisfies ReadonlyArray<keyof CustomerProfile>;

export type CustomerEvent =
  | DomainEvent<'customer.created', {
    customer_id: string;
    merchant_id: string;
    customer_type: CustomerType;
    profile: CustomerProfile;
    at: string;
  }>
  | KycEvent;

type CustomerCreated = Extract<CustomerEvent, { type: 'customer.created' }>;

export interface CustomerState {
  exists: boolean;
  id: string;
  merchantId: string;
  customerType: CustomerType;
  profile: CustomerProfile;
  kycStatus: KycStatus;
  /** The KYC reviews (domain/kyc.ts); `kycStatus` is `kyc.status`. */
  kyc: KycState;
  createdAt: string;
  updatedAt: string;
}

/** What may be asked of a customer, each a plain value: its creation, and its KYC (domain/kyc.ts). */
export type CustomerCommand =
  | { type: 'CreateCustomer'; data: CreateCustomer }
  | KycCommand;

export const customerDecider = {
  initialState: (): CustomerState => ({
    exists: false, id: '', merchantId: '', customerType: 'individual', profile: {}, kycStatus: 'not_started',
    kyc: initialKycState(), createdAt: '', updatedAt: '',
  }),
  evolve(s: CustomerState, e: CustomerEvent): CustomerState {
    switch (e.type) {
      case 'customer.created':
        return {
          ...s, exists: true, id: e.data.customer_id, merchantId: e.data.merchant_id, customerType: e.data.customer_type,
          profile: e.data.profile, kycStatus: 'not_started', createdAt: e.data.at, updatedAt: e.data.at,
        };
      case 'customer.kyc_submitted':
      case 'customer.kyc_reviewed': {
        const kyc = evolveKyc(s.kyc, e);
        return { ...s, kyc, kycStatus: kyc.status, updatedAt: e.data.at };
      }
      case 'customer.kyc_document_checked':
        // Progress of a review: the customer record does not change until the verdict.
        return { ...s, kyc: evolveKyc(s.kyc, e) };
      default:
        return unreachable(e);
    }
  },
  decide(command: CustomerCommand, s: CustomerState): CustomerEvent[] {
    switch (command.type) {
      case 'CreateCustomer':
        return createCustomer(s, command.data);
      case 'SubmitKyc':
      case 'RecordKycDocumentCheck':
      case 'CompleteKycReview':
        return decideKyc(command, s);
      default:
        return unreachable(command);
    }
  },
} satisfies CommandDecider<CustomerState, CustomerEvent, CustomerCommand>;

// ---- decisions (pure; the id and the time arrive in the command) ----

/**
 * The customer a money command names in its `customer_id`: another merchant's customer gets the
 * same answer as no customer at all.
 */
export function requireNamedCustomer(s: CustomerState, merchantId: string): void {
  if (!s.exists || s.merchantId !== merchantId) {
    throw new DomainError('customer_not_found', 'Customer not found', [{ field: 'customer_id', message: 'no such customer for this merchant' }]);
  }
}

export interface CreateCustomer {
  customerId: string;
  merchantId: string;
  customerType: CustomerType;
  profile: CustomerProfile;
  /** ISO date-time of the request. */
  at: string;
}

const OLDEST_BIRTH_DATE = '1900-01-01';

function isSupportedCountry(code: string | undefined): code is CountryCode {
  return code !== undefined && Object.hasOwn(COUNTRIES, code);
}

/**
 * The profile's checks the schema cannot make (the phone for its country, the birth date against the
 * clock), one detail per problem, and the phone in E.164 when it is valid. Fields of another type than
 * a string are the schema's to report: the API runs this beside a schema error too, so that one answer
 * lists every problem of a body (issue 31).
 */
export function profileProblems(profile: { readonly [F in keyof CustomerProfile]?: unknown }, at: string): { details: ErrorDetail[]; phone?: string } {
  const details: ErrorDetail[] = [];
  const text = (f: keyof CustomerProfile) => (typeof profile[f] === 'string' ? (profile[f] as string) : undefined);
  const phone = text('phone');
  let normalised: string | undefined;
  if (phone !== undefined) {
    // The phone must be a number of the customer's country when that is a covered one; otherwise
    // (no country, or a customer living elsewhere) an E.164 number of any covered country.
    const countryCode = text('country_code');
    const country = isSupportedCountry(countryCode) ? countryCode : undefined;
    try {
      normalised = normalisePhone(phone, country, 'phone');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      details.push(...(err.details ?? [{ field: 'phone', message: err.message }]));
    }
  }
  const birth = text('date_of_birth');
  if (birth !== undefined) {
    // A birth "today" anywhere on Earth (UTC+14) is not in the future.
    if (!isCalendarDate(birth)) {
      details.push({ field: 'date_of_birth', message: 'must be a date written YYYY-MM-DD' });
    } else if (birth > latestDateAt(at)) {
      details.push({ field: 'date_of_birth', message: 'must not be in the future' });
    } else if (birth < OLDEST_BIRTH_DATE) {
      details.push({ field: 'date_of_birth', message: `must not be before ${OLDEST_BIRTH_DATE}` });
    }
  }
  return normalised === undefined ? { details } : { details, phone: normalised };
}

/**
 * Creates the customer, or nothing when the stream already holds it (a retried create with the same
 * id: the caller answers with the existing customer). Refusals are `bad_request` with one detail per
 * problem, each naming its field.
 */
function createCustomer(s: CustomerState, c: CreateCustomer): CustomerCreated[] {
  if (s.exists) {
    invariant(s.merchantId === c.merchantId, `customer ${c.customerId} belongs to another merchant`);
    return [];
  }
  const details: ErrorDetail[] = [];
  const profile: CustomerProfile = {};
  for (const f of PROFILE_FIELDS) {
    const v = c.profile[f];
    if (v !== undefined) (profile as Record<string, unknown>)[f] = v;
  }

  for (const f of REQUIRED_IDENTITY_FIELDS[c.customerType]) {
    const v = profile[f];
    if (typeof v !== 'string' || v.trim() === '') details.push({ field: f, message: `is required for a ${c.customerType} customer` });
  }

  const checked = profileProblems(profile, c.at);
  details.push(...checked.details);
  if (checked.phone !== undefined) profile.phone = checked.phone;

  if (details.length > 0) throw new DomainError('bad_request', 'The customer is invalid', details);
  return [{
    type: 'customer.created',
    data: { customer_id: c.customerId, merchant_id: c.merchantId, customer_type: c.customerType, profile, at: c.at },
  }];
}
