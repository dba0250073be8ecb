// Schemas shared by every part of the OpenAPI document (JSON Schema 2020-12, as OpenAPI 3.1 uses).
import { STATUS_OF } from '../errors.ts';
import { FAILURE_REASONS } from '../../domain/failure-reasons.ts';
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The seed's rail party fields; a Recipient is these plus who the recipient is. */
const railPartyProperties = {
  country_code: { $ref: '#/components/schemas/CountryCode' },
  rail_type: { $ref: '#/components/schemas/RailType' },
  phone: { type: 'string', minLength: 1, maxLength: 32 },
  operator_code: { type: 'string', minLength: 1, maxLength: 40 },
  bank_name: { type: 'string', minLength: 1, maxLength: 200 },
  bank_code: { type: 'string', minLength: 1, maxLength: 40 },
  account_name: { type: 'string', minLength: 1, maxLength: 200 },
  account_number: { type: 'string', minLength: 1, maxLength: 64 },
};

export const commonSchemas = {
  Uuid: { type: 'string', format: 'uuid' },
  Amount: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', maxLength: 32, description: 'Decimal string' },
  Currency: { type: 'string', enum: ['XAF', 'XOF'] },
  CountryCode: { type: 'string', minLength: 2, maxLength: 2, pattern: '^[A-Z]{2}$' },
  RailType: { type: 'string', enum: ['mobile_money', 'bank_transfer'] },
  DateTime: { type: 'string', format: 'date-time' },
  Metadata: {
    type: 'object',
    maxProperties: 20,
    propertyNames: { maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 500 },
    description: 'Flat object of at most 20 string values of up to 500 characters',
  },
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: Object.keys(STATUS_OF), description: 'What went wrong, for programs (CONTRACT §5); the HTTP status follows from it' },
          message: { type: 'string', description: 'What went wrong, for people' },
          request_id: { type: 'string' },
          details: {
            type: 'array',
            items: {
              type: 'object',
              required: ['field', 'message'],
              properties: { field: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  Meta: {
    type: 'object',
    description: 'On the answers of idempotent requests: the key, and whether this answer is a replay of the first.',
    required: ['idempotency_key', 'idempotency_replayed'],
    properties: { idempotency_key: { type: 'string' }, idempotency_replayed: { type: 'boolean' } },
  },
  StatusHistoryEntry: {
    type: 'object',
    required: ['status', 'reason', 'created_at'],
    properties: {
      status: { type: 'string' },
      reason: { type: ['string', 'null'] },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  // Why a payment, a refund or a transfer's leg failed (CONTRACT §15), and the provider's own account of it.
  FailureReason: {
    type: 'string',
    enum: [...FAILURE_REASONS],
    description:
      'Why it failed, in words you can act on (CONTRACT §15): `payer_declined` (the payer refused or did not approve, or ' +
      'a wrong one-time password: ask them to try again), `expired` (the payer did not approve in time: start a new ' +
      'payment), `insufficient_funds` (the payer\'s balance is too low: ask them to top up, or a smaller amount), ' +
      '`account_not_found` (no mobile-money account for that phone: check the number and the operator), `limit_reached` ' +
      '(an account or amount limit: a smaller amount, or later), `not_allowed` (the operator does not allow this payment, ' +
      'e.g. a collection without its one-time password: fix the request), `provider_error` (anything else, on the ' +
      'provider\'s side: retry later, or contact support with provider_failure).',
  },
  ProviderFailure: {
    type: 'object',
    required: ['provider', 'code', 'message'],
    description: 'The provider\'s own account of a failure: which provider carried the leg, its code and its message, as it sent them.',
    properties: {
      provider: { type: 'string', description: 'The provider that carried the leg: `sandbox`, `mtn_momo`, `pawapay`' },
      code: { type: 'string', description: 'The provider\'s own code, e.g. `INSUFFICIENT_FUNDS` (sandbox), `NOT_ENOUGH_FUNDS` (MTN MoMo)' },
      message: { type: 'string', description: 'The provider\'s message, for people' },
    },
  },
  // Money core (issue 3): the parties of payins, payouts and transfers, and the wallet impact.
  RailParty: {
    type: 'object',
    additionalProperties: false,
    required: ['country_code', 'rail_type'],
    description: 'Where money is collected from or paid to. A mobile_money party needs phone (E.164, or the national form of country_code; answered in E.164) and operator_code.',
    properties: {
      ...railPartyProperties,
    },
  },
  Recipient: {
    type: 'object',
    additionalProperties: false,
    required: ['country_code', 'rail_type', 'recipient_type'],
    description: 'A rail party plus who the recipient is.',
    properties: {
      ...railPartyProperties,
      recipient_type: { type: 'string', enum: ['individual', 'business'] },
      first_name: { type: 'string', minLength: 1, maxLength: 100 },
      last_name: { type: 'string', minLength: 1, maxLength: 100 },
      business_name: { type: 'string', minLength: 1, maxLength: 200 },
      email: { type: 'string', format: 'email', maxLength: 254 },
      recipient_nationality_code: { $ref: '#/components/schemas/CountryCode' },
      address_line1: { type: 'string', minLength: 1, maxLength: 200 },
      city: { type: 'string', minLength: 1, maxLength: 100 },
    },
  },
  WalletImpact: {
    type: 'object',
    required: ['effects'],
    description:
      "The effect on the merchant's wallet, per currency and per moment of the resource's life. Each effect gives the " +
      'signed change of `available` and `reserved` in whole francs. Payin: `completed` credits receive_amount to available. ' +
      'Payout: `created` moves send_amount from available to reserved; `completed` debits reserved; `failed` releases it ' +
      'back to available. Transfer: `created` reserves payout_amount in the payout currency; `collection_completed` credits ' +
      'payin_amount − total_fee in the payin currency; `disbursement_completed` debits the reservation; `collection_failed` ' +
      'and `disbursement_failed` release it; each relaunch adds `payout_relaunched` (its payout_amount reserved again) and ' +
      'its own `disbursement_completed`/`disbursement_failed`, each naming its `attempt`. On payments, `applied` tells ' +
      'whether the effect has happened.',
    properties: {
      effects: {
        type: 'array',
        items: {
          type: 'object',
          required: ['currency', 'when', 'available_delta', 'reserved_delta', 'description'],
          properties: {
            currency: { $ref: '#/components/schemas/Currency' },
            when: {
              type: 'string',
              enum: [
                'created', 'completed', 'failed', 'collection_completed', 'collection_failed', 'payout_relaunched',
                'disbursement_completed', 'disbursement_failed',
              ],
            },
            attempt: { type: 'integer', minimum: 1, description: 'Transfers: the disbursement attempt the effect belongs to' },
            available_delta: { type: 'string', pattern: '^-?[0-9]+$', description: 'Signed change of available, e.g. "-5000"' },
            reserved_delta: { type: 'string', pattern: '^-?[0-9]+$', description: 'Signed change of reserved' },
            description: { type: 'string' },
            applied: { type: 'boolean', description: 'Payments only: the effect has happened' },
          },
        },
      },
    },
  },
} as const;

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});

export const errors = {
  400: errorResponse('Invalid request or business refusal'),
  401: errorResponse('Missing, invalid, expired or inactive credentials'),
  403: errorResponse('The API key lacks the scope this operation needs (named in error.message)'),
  404: errorResponse('Not found for the authenticated merchant'),
  409: errorResponse('Idempotency conflict or same key still processing'),
  429: errorResponse('Rate limited'),
};

export const json = (schema: unknown, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

export const body = (schema: unknown) => ({
  required: true,
  content: { 'application/json': { schema } },
});

export const idParam = (name: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
});

export const idempotencyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'One unique key per business intent; reuse only to retry the same body. Kept 24 hours.',
};

/** A list bound: an RFC 3339 date-time, or a calendar date (the day's start or end, UTC: projections/pagination.ts). */
const dateOrDateTime = { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'string', format: 'date' }] };

export const listParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { name: 'cursor', in: 'query', schema: { type: 'string', maxLength: 200 } },
  { name: 'status', in: 'query', schema: { type: 'string', maxLength: 40 } },
  { name: 'customer_id', in: 'query', schema: { type: 'string', format: 'uuid' } },
  {
    name: 'created_from', in: 'query', schema: dateOrDateTime,
    description: 'Only what was created at or after this instant (inclusive). A date (YYYY-MM-DD) means the start of that day, UTC.',
  },
  {
    name: 'created_to', in: 'query', schema: dateOrDateTime,
    description: 'Only what was created at or before this instant (inclusive). A date (YYYY-MM-DD) includes that whole day, UTC (to its last microsecond).',
  },
];

export const listOf = (item: unknown) => ({
  type: 'object',
  required: ['data', 'has_more', 'next_cursor'],
  properties: {
    data: { type: 'array', items: item },
    has_more: { type: 'boolean' },
    next_cursor: { type: ['string', 'null'] },
  },
});
