// Merchant API: KYC (seed "KYC record"; CONTRACT.md §5). POST submits documents for review, GET reads
// the latest status and the latest submission's documents. No Idempotency-Key (the seed lists none):
// a retried POST while the first submission is under review is refused with 409 kyc_review_pending.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idParam, json, ref } from '../openapi/common.ts';
import * as C from '../../domain/customer.ts';
import * as K from '../../domain/kyc.ts';
import { DomainError } from '../../domain/errors.ts';
import { submitKyc } from '../../commands/kyc.ts';

const tags = ['KYC'];
const merchant = { 'x-auth': 'merchant' as const, tags };
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

const fileUrl = {
  type: 'string', minLength: 1, maxLength: 2048, format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://',
  description: 'A public https URL of an image or a PDF (http and private addresses only with ALLOW_PRIVATE_URLS)',
};
const date = (description: string) => ({ type: 'string', format: 'date', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description });

const documentProperties = {
  document_type: { type: 'string', enum: [...K.KYC_DOCUMENT_TYPES] },
  document_number: { type: 'string', minLength: 1, maxLength: 64, pattern: '\\S' },
  issue_country_code: ref('CountryCode'),
  issue_date: date('YYYY-MM-DD, not in the future'),
  expiry_date: date('YYYY-MM-DD, not in the past, after issue_date'),
  front_file_url: fileUrl,
  back_file_url: fileUrl,
  selfie_file_url: fileUrl,
};

const schemas = {
  KycDocumentSubmission: {
    type: 'object',
    additionalProperties: false,
    required: ['document_type', 'document_number', 'issue_country_code'],
    properties: documentProperties,
    anyOf: K.KYC_FILE_FIELDS.map((f) => ({ required: [f] })),
    description: 'At least one of front_file_url, back_file_url, selfie_file_url.',
  },
  KycSubmission: {
    type: 'object',
    additionalProperties: false,
    required: ['documents'],
    properties: {
      documents: { type: 'array', minItems: 1, maxItems: K.MAX_KYC_DOCUMENTS, items: ref('KycDocumentSubmission') },
    },
  },
  KycDocument: {
    type: 'object',
    description: 'Every field is always present: as sent, or null when it was not sent. rejection_reason is set when rejected.',
    required: ['id', ...Object.keys(documentProperties), 'status', 'rejection_reason', 'created_at'],
    properties: {
      id: ref('Uuid'),
      ...Object.fromEntries(Object.entries(documentProperties).map(([k, v]) => [k, nullable(v)])),
      status: { type: 'string', enum: [...K.KYC_DOCUMENT_STATUSES] },
      rejection_reason: { type: ['string', 'null'] },
      created_at: ref('DateTime'),
    },
  },
  KycRecord: {
    type: 'object',
    required: ['customer_id', 'kyc_status', 'documents'],
    description:
      'kyc_status: not_started (nothing submitted) → pending (under review) → verified (every document verified) | rejected. ' +
      'documents: the latest submission\'s; earlier submissions stay in the customer\'s history.',
    properties: {
      customer_id: ref('Uuid'),
      kyc_status: { type: 'string', enum: [...C.KYC_STATUSES] },
      documents: { type: 'array', items: ref('KycDocument') },
    },
  },
};

type DocumentView = Record<string, unknown>;

function documentView(d: {
  id: string; status: string; rejection_reason: string | null; created_at: string;
  [field: string]: unknown;
}): DocumentView {
  return {
    id: d.id,
    ...Object.fromEntries(Object.keys(documentProperties).map((f) => [f, d[f] ?? null])),
    status: d.status,
    rejection_reason: d.rejection_reason ?? null,
    created_at: d.created_at,
  };
}

/** The KYC record from the aggregate (the POST answer). */
function stateView(s: C.CustomerState) {
  return { customer_id: s.id, kyc_status: s.kycStatus, documents: (s.kyc.current?.documents ?? []).map((d) => documentView({ ...d })) };
}

interface DocumentRow {
  id: string; status: string; rejection_reason: string | null; created_at: Date | string;
  [field: string]: unknown;
}

export const kycModule: ApiModule = {
  schemas,
  paths: {
    '/customers/{customer_id}/kyc': {
      post: {
        ...merchant, 'x-scope': 'customers:write', operationId: 'submitKyc', summary: 'Submit identity documents for review',
        description:
          'Starts a review: kyc_status becomes pending and each document uploaded; the service then fetches every file ' +
          '(at most 10 MiB, an image or a PDF) and verifies the documents whose files were fetched, rejecting the others ' +
          'with a rejection_reason. Refused with 409 kyc_review_pending while a review runs and kyc_already_verified once ' +
          'verified; after a rejection a new submission starts a new review.',
        parameters: [idParam('customer_id')],
        requestBody: body(ref('KycSubmission')),
        responses: {
          201: json(ref('KycRecord'), 'Submitted'), 400: errors[400], 401: errors[401], 404: errors[404],
          409: { ...errors[409], description: 'kyc_review_pending (a review is running) or kyc_already_verified' },
        },
      },
      get: {
        ...merchant, 'x-scope': 'customers:read', operationId: 'getKyc', summary: "Read a customer's KYC status and documents",
        description: 'not_started until documents are submitted; then the latest submission\'s documents with their status.',
        parameters: [idParam('customer_id')],
        responses: { 200: json(ref('KycRecord')), 401: errors[401], 404: errors[404] },
      },
    },
  },
  bodyChecks: {
    submitKyc: (body, at) => K.submissionDateProblems(body?.documents, at),
  },
  handlers: {
    submitKyc: async (ctx: Ctx) => {
      const state = await submitKyc(ctx.services, {
        customerId: ctx.params.customer_id!,
        merchantId: ctx.merchantId,
        documents: ctx.body.documents as K.KycDocumentInput[],
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: stateView(state) };
    },
    getKyc: async (ctx: Ctx) => {
      const knex = ctx.services.knex;
      const customerId = ctx.params.customer_id!;
      // Another merchant's customer gets the same answer as no customer at all.
      const customer = await knex('customers').where({ id: customerId, merchant_id: ctx.merchantId }).first('id');
      if (!customer) throw new DomainError('not_found', 'Customer not found');
      const record = (await knex('kyc_records').where({ customer_id: customerId }).first()) as
        { kyc_status: C.KycStatus; submission_id: string } | undefined;
      if (!record) return { status: 200, body: { customer_id: customerId, kyc_status: 'not_started', documents: [] } };
      const rows = (await knex('kyc_documents').where({ submission_id: record.submission_id }).orderBy('seq')) as DocumentRow[];
      return {
        status: 200,
        body: {
          customer_id: customerId,
          kyc_status: record.kyc_status,
          documents: rows.map((r) => documentView({ ...r, created_at: new Date(r.created_at).toISOString() })),
        },
      };
    },
  },
};
