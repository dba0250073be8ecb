// Merchant API: payouts (CONTRACT.md §4, §5). Create from an active payout quote, holding send_amount
// in the wallet (idempotent; 201 pending; 400 insufficient_balance), read, list.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { partyProblems } from '../../domain/payment.ts';
import { createPayout } from '../../commands/payouts.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';
import { renderPayout } from '../../projections/views/payout.ts';
import { listParamsWith } from './money-schemas.ts';
import { PAYMENT_STATUSES } from './payins.ts';

const tags = ['Payouts'];
const merchant = { 'x-auth': 'merchant' as const, tags };

const createRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['quote_id', 'customer_id', 'payment_reason_text', 'recipient'],
  properties: {
    quote_id: ref('Uuid'),
    customer_id: ref('Uuid'),
    payment_reason_text: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' },
    recipient: { ...ref('Recipient'), description: 'Must match the quote\'s country_code, rail_type and operator_code' },
    metadata: ref('Metadata'),
  },
};

interface Row { body: Record<string, unknown> }

export const payoutsModule: ApiModule = {
  schemas: { PayoutCreate: createRequest },
  paths: {
    '/payouts': {
      post: {
        ...merchant, 'x-scope': 'payouts:write', operationId: 'createPayout', summary: 'Create a payout from an active payout quote', 'x-idempotent': true,
        description:
          'Pays the quote\'s receive_amount to the recipient. send_amount is held in the wallet at once (400 ' +
          'insufficient_balance if short); answers 201 pending; payout.completed or payout.failed follows. Idempotent. An operator ' +
          'closed for payouts refuses it (400 operator_unavailable: nothing held, the quote not consumed).',
        parameters: [idempotencyHeader], requestBody: body(ref('PayoutCreate')),
        responses: { 201: json(ref('Payout'), 'Created (status pending)'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
      get: {
        ...merchant, 'x-scope': 'payouts:read', operationId: 'listPayouts', summary: 'List payouts, newest first',
        description: 'Filters: status, customer_id, created_from and created_to (inclusive).',
        parameters: listParamsWith(PAYMENT_STATUSES),
        responses: { 200: json(listOf(ref('Payout'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/payouts/{payout_id}': {
      get: {
        ...merchant, 'x-scope': 'payouts:read', operationId: 'getPayout', summary: 'Read a payout',
        description: 'The payout with its status history and wallet impact.',
        parameters: [idParam('payout_id')], responses: { 200: json(ref('Payout')), 401: errors[401], 404: errors[404] },
      },
    },
  },
  // Beside a schema error, the party checks that need no quote (module.ts BodyCheck).
  bodyChecks: {
    createPayout: (body) => partyProblems(body?.recipient, 'recipient'),
  },
  handlers: {
    createPayout: async (ctx: Ctx) => {
      invariant(ctx.idempotency, 'createPayout runs under an idempotency claim');
      const { state, existed } = await createPayout(ctx.services, {
        payoutId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, customerId: ctx.body.customer_id, quoteId: ctx.body.quote_id,
        recipient: ctx.body.recipient, paymentReasonText: ctx.body.payment_reason_text, metadata: ctx.body.metadata ?? {},
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: renderPayout(state), replayed: existed };
    },
    getPayout: async (ctx) => {
      const row = (await ctx.services.knex('payouts').where({ id: ctx.params.payout_id, merchant_id: ctx.merchantId }).first('body')) as Row | undefined;
      if (!row) throw new DomainError('not_found', 'Payout not found');
      return { status: 200, body: row.body };
    },
    listPayouts: async (ctx) => {
      const { knex } = ctx.services;
      const q = knex('payouts').select('body').where({ merchant_id: ctx.merchantId });
      if (ctx.query.customer_id !== undefined) q.where({ customer_id: ctx.query.customer_id });
      if (ctx.query.status !== undefined) q.where({ status: ctx.query.status });
      return { status: 200, body: await paginate(knex, q, listRequest(ctx.query), (r: Row) => r.body) };
    },
  },
};
