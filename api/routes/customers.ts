// Merchant API: customers (seed "Customer"; CONTRACT.md §5, §8). Create (idempotent), read, list.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, listParams, ref } from '../openapi/common.ts';
import * as C from '../../domain/customer.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { createCustomer } from '../../commands/customers.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';

const tags = ['Customers'];
const merchant = { 'x-auth': 'merchant' as const, tags };

const name = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' };
const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength });

const profileProperties = {
  first_name: name,
  last_name: name,
  business_name: { ...name, maxLength: 200 },
  id_number: { ...text(64), pattern: '\\S' },
  phone: { ...text(32), description: 'E.164 (+237…) or national form of country_code; answered in E.164' },
  email: { type: 'string', format: 'email', maxLength: 254 },
  country_code: ref('CountryCode'),
  nationality_code: ref('CountryCode'),
  date_of_birth: { type: 'string', format: 'date', description: 'YYYY-MM-DD, not in the future' },
  address_line1: text(200),
  city: text(100),
  occupation: text(100),
  source_of_funds: text(100),
  external_ref: { ...text(255), description: "The merchant's own identifier for the customer" },
  metadata: ref('Metadata'),
};

/** Names `fields` as properties of a branch (`{}`: the top level checks their values) for schema linters. */
const declared = (fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, {}]));

/** The seed's required identity fields per type, from the domain's table (one rule, two checks). */
const requiredByType = C.CUSTOMER_TYPES.map((t) => ({
  // individual is the default: its condition holds when customer_type is left out.
  if: t === 'individual' ? { properties: { customer_type: { const: t } } } : { properties: { customer_type: { const: t } }, required: ['customer_type'] },
  then: { properties: declared(C.REQUIRED_IDENTITY_FIELDS[t]), required: [...C.REQUIRED_IDENTITY_FIELDS[t]] },
}));

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

const schemas = {
  CustomerCreate: {
    type: 'object',
    additionalProperties: false,
    properties: {
      // No `default:` keyword: generated clients (openapi-typescript) would make the field mandatory.
      customer_type: { type: 'string', enum: [...C.CUSTOMER_TYPES], description: 'individual when left out' },
      ...profileProperties,
    },
    allOf: requiredByType,
    description:
      'Required identity fields by customer_type: individual (the default): first_name, last_name; ' +
      'retail: first_name, last_name, id_number; business: business_name.',
  },
  Customer: {
    type: 'object',
    description:
      'Every field of the create request is always present: as sent (the phone in E.164), or null when it was not sent; metadata is {} when none was sent, as on payins, payouts and transfers.',
    required: ['id', 'merchant_id', 'customer_type', 'kyc_status', 'created_at', 'updated_at', ...C.PROFILE_FIELDS],
    properties: {
      id: ref('Uuid'),
      merchant_id: ref('Uuid'),
      customer_type: { type: 'string', enum: [...C.CUSTOMER_TYPES] },
      ...Object.fromEntries(Object.entries(profileProperties).map(([k, v]) => [k, k === 'metadata' ? v : nullable(v)])),
      kyc_status: { type: 'string', enum: [...C.KYC_STATUSES] },
      created_at: ref('DateTime'),
      updated_at: ref('DateTime'),
      _meta: ref('Meta'),
    },
  },
};

interface CustomerRow {
  id: string;
  merchant_id: string;
  customer_type: C.CustomerType;
  kyc_status: C.KycStatus;
  metadata: Record<string, string> | null;
  created_at: Date | string;
  updated_at: Date | string;
  [field: string]: unknown;
}

const iso = (d: Date | string) => new Date(d).toISOString();

/** The answer for a customer, from the aggregate (create) or the read model (reads): the same shape. */
function view(c: {
  id: string; merchantId: string; customerType: C.CustomerType; kycStatus: C.KycStatus;
  profile: Record<string, unknown>; createdAt: string; updatedAt: string;
}) {
  return {
    id: c.id,
    merchant_id: c.merchantId,
    customer_type: c.customerType,
    ...Object.fromEntries(C.PROFILE_FIELDS.map((f) => [f, c.profile[f] ?? null])),
    // One rule on every resource with metadata (payins, payouts, transfers): {} when none was sent.
    // The stored events and rows keep their null: this is how it is answered.
    metadata: c.profile.metadata ?? {},
    kyc_status: c.kycStatus,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

function rowView(row: CustomerRow) {
  return view({
    id: row.id, merchantId: row.merchant_id, customerType: row.customer_type, kycStatus: row.kyc_status,
    profile: row, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
  });
}

function profileOf(body: Record<string, unknown>): C.CustomerProfile {
  const profile: Record<string, unknown> = {};
  for (const f of C.PROFILE_FIELDS) if (body[f] !== undefined) profile[f] = body[f];
  return profile as C.CustomerProfile;
}

// CONTRACT.md §8: every list takes status, customer_id, created_from, created_to. On customers,
// `status` is the KYC status (a customer has no other) and `customer_id` the customer's own id.
const listParameters = [
  ...listParams
    .map((p) => (p.name === 'status'
      ? { ...p, description: 'The KYC status (kyc_status)', schema: { type: 'string', enum: [...C.KYC_STATUSES] } }
      : p.name === 'customer_id'
        ? { ...p, description: "Only this customer (its own id); an unknown id or another merchant's gives an empty list" }
        : p)),
  // The field is kyc_status: a merchant filters by the name it reads (status stays, the list convention).
  { name: 'kyc_status', in: 'query', schema: { type: 'string', enum: [...C.KYC_STATUSES] }, description: 'The KYC status; the same filter as status' },
  { name: 'external_ref', in: 'query', schema: { type: 'string', minLength: 1, maxLength: 255 }, description: "The merchant's own identifier" },
];

export const customersModule: ApiModule = {
  schemas,
  paths: {
    '/customers': {
      post: {
        ...merchant, 'x-scope': 'customers:write', operationId: 'createCustomer', summary: 'Create a customer',
        description:
          'The person or business a payment is for: every payin, payout and transfer names one. ' +
          'The answer echoes every profile field (null when not sent), the phone in E.164. Idempotent.',
        'x-idempotent': true,
        parameters: [idempotencyHeader],
        requestBody: body(ref('CustomerCreate')),
        responses: { 201: json(ref('Customer'), 'Created'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
      get: {
        ...merchant, 'x-scope': 'customers:read', operationId: 'listCustomers',
        summary: 'List customers, newest first',
        description: 'Filters: kyc_status (or status, its other name: both must match when both are sent), customer_id (the customer\'s own id: that customer, ' +
          'or nothing when it is unknown or another merchant\'s), created_from and created_to (inclusive), external_ref. ' +
          'Send the same filters with the cursor of the previous page.',
        parameters: listParameters,
        responses: { 200: json(listOf(ref('Customer'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/customers/{customer_id}': {
      get: {
        ...merchant, 'x-scope': 'customers:read', operationId: 'getCustomer', summary: 'Read a customer',
        description: 'The customer with its KYC status; another merchant\'s customer is a 404 like an unknown one.',
        parameters: [idParam('customer_id')],
        responses: { 200: json(ref('Customer')), 401: errors[401], 404: errors[404] },
      },
    },
  },
  bodyChecks: {
    createCustomer: (body, at) => (body && typeof body === 'object' ? C.profileProblems(body, at).details : []),
  },
  handlers: {
    createCustomer: async (ctx: Ctx) => {
      invariant(ctx.idempotency, 'createCustomer runs under an idempotency claim');
      const { state, existed } = await createCustomer(ctx.services, {
        customerId: ctx.idempotency.resourceId,
        merchantId: ctx.merchantId,
        customerType: (ctx.body.customer_type ?? 'individual') as C.CustomerType,
        profile: profileOf(ctx.body),
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: view({ ...state, profile: state.profile as Record<string, unknown> }), replayed: existed };
    },
    getCustomer: async (ctx: Ctx) => {
      // Another merchant's customer gets the same answer as no customer at all.
      const row = (await ctx.services.knex('customers')
        .where({ id: ctx.params.customer_id, merchant_id: ctx.merchantId }).first()) as CustomerRow | undefined;
      if (!row) throw new DomainError('not_found', 'Customer not found');
      return { status: 200, body: rowView(row) };
    },
    listCustomers: async (ctx: Ctx) => {
      const knex = ctx.services.knex;
      const q = knex('customers').select('*').where({ merchant_id: ctx.merchantId });
      if (ctx.query.status !== undefined) q.where({ kyc_status: ctx.query.status });
      if (ctx.query.kyc_status !== undefined) q.where({ kyc_status: ctx.query.kyc_status });
      if (ctx.query.customer_id !== undefined) q.where({ id: ctx.query.customer_id });
      if (ctx.query.external_ref !== undefined) q.where({ external_ref: ctx.query.external_ref });
      const page = await paginate(knex, q, listRequest(ctx.query), rowView);
      return { status: 200, body: page };
    },
  },
};
