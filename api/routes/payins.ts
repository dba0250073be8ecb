// Merchant API: payins (seed "Payin"; CONTRACT.md §3, §5). Create from an active payin quote
// (idempotent; 201 pending), read, list.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { partyProblems } from '../../domain/payment.ts';
import { createPayin } from '../../commands/payins.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';
import { renderPayin } from '../../projections/views/payin.ts';
import { listParamsWith } from './money-schemas.ts';

const tags = ['Payins'];
const merchant = { 'x-auth': 'merchant' as const, tags };
export const PAYMENT_STATUSES = ['created', 'pending', 'completed', 'failed'];

const createRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['quote_id', 'customer_id', 'source'],
  properties: {
    quote_id: ref('Uuid'),
    customer_id: ref('Uuid'),
    source: { ...ref('RailParty'), description: 'The payer: must match the quote\'s country_code, rail_type and operator_code' },
    otp: {
      type: 'string', pattern: '^[0-9]{4,8}$',
      description: 'One-time password for operators that require one (SN_ORANGE_MOMO, CI_ORANGE_MOMO). Never stored in clear, never returned.',
    },
    metadata: ref('Metadata'),
  },
};

interface Row { body: Record<string, unknown> }

export const payinsModule: ApiModule = {
  schemas: { PayinCreate: createRequest },
  paths: {
    '/payins': {
      post: {
        ...merchant, 'x-scope': 'payins:write', operationId: 'createPayin', summary: 'Create a payin from an active payin quote', 'x-idempotent': true,
        description:
          'Collects the quote\'s send_amount from the payer (source). Answers 201 pending; the outcome ' +
          'arrives as payin.completed or payin.failed (webhook and GET). The quote is consumed. Idempotent. An operator ' +
          'closed for payins refuses it (400 operator_unavailable: the quote not consumed).',
        parameters: [idempotencyHeader], requestBody: body(ref('PayinCreate')),
        responses: { 201: json(ref('Payin'), 'Created (status pending)'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
      get: {
        ...merchant, 'x-scope': 'payins:read', operationId: 'listPayins', summary: 'List payins, newest first',
        description: 'Filters: status, customer_id, payment_link_id, created_from and created_to (inclusive).',
        parameters: [
          ...listParamsWith(PAYMENT_STATUSES),
          { name: 'payment_link_id', in: 'query', schema: { type: 'string', format: 'uuid' }, description: 'Only the payins made through this payment link' },
        ],
        responses: { 200: json(listOf(ref('Payin'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/payins/{payin_id}': {
      get: {
        ...merchant, 'x-scope': 'payins:read', operationId: 'getPayin', summary: 'Read a payin',
        description: 'The payin with its status history and wallet impact.',
        parameters: [idParam('payin_id')], responses: { 200: json(ref('Payin')), 401: errors[401], 404: errors[404] },
      },
    },
  },
  // Beside a schema error, the party checks that need no quote (module.ts BodyCheck).
  bodyChecks: {
    createPayin: (body) => partyProblems(body?.source, 'source'),
  },
  handlers: {
    createPayin: async (ctx: Ctx) => {
      invariant(ctx.idempotency, 'createPayin runs under an idempotency claim');
      const { state, existed } = await createPayin(ctx.services, {
        payinId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, customerId: ctx.body.customer_id, quoteId: ctx.body.quote_id,
        source: ctx.body.source, otp: ctx.body.otp, metadata: ctx.body.metadata ?? {},
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: renderPayin(state), replayed: existed };
    },
    getPayin: async (ctx) => {
      const row = (await ctx.services.knex('payins').where({ id: ctx.params.payin_id, merchant_id: ctx.merchantId }).first('body')) as Row | undefined;
      if (!row) throw new DomainError('not_found', 'Payin not found');
      return { status: 200, body: row.body };
    },
    listPayins: async (ctx) => {
      const { knex } = ctx.services;
      const q = knex('payins').select('body').where({ merchant_id: ctx.merchantId });
      if (ctx.query.customer_id !== undefined) q.where({ customer_id: ctx.query.customer_id });
      if (ctx.query.payment_link_id !== undefined) q.where({ payment_link_id: ctx.query.payment_link_id });
      if (ctx.query.status !== undefined) q.where({ status: ctx.query.status });
      return { status: 200, body: await paginate(knex, q, listRequest(ctx.query), (r: Row) => r.body) };
    },
  },
};
