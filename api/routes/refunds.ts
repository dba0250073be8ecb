// Merchant API: refunds (CONTRACT §9). Give back money of a completed payin to its payer, in full
// (the default: what is left) or in part, holding the amount in the wallet (idempotent; 201
// pending; refund.completed or refund.failed follows), read, list (filter payin_id).
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { parseAmount } from '../../domain/money.ts';
import { createRefund } from '../../commands/refunds.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';
import { renderRefund } from '../../projections/views/refund.ts';
import { failureProperties, listParamsWith } from './money-schemas.ts';
import { PAYMENT_STATUSES } from './payins.ts';

const tags = ['Refunds'];
const merchant = { 'x-auth': 'merchant' as const, tags };

const createRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['payin_id'],
  properties: {
    payin_id: { ...ref('Uuid'), description: 'A completed payin of this merchant' },
    amount: { ...ref('Amount'), description: 'Whole francs ("2000" or "2000.00"); defaults to what is left to refund on the payin' },
    reason: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' },
    metadata: ref('Metadata'),
  },
};

const refundSchema = {
  type: 'object',
  description:
    'Money of a completed payin given back to the party it was collected from (`recipient` is the payin\'s `source`). ' +
    'amount is held in the wallet at create (available → reserved), paid to the operator when the refund completes, or ' +
    'released if it fails. Status: `created` → `pending` (create answers pending) → `completed` | `failed`; a failed ' +
    'refund says why in failure_reason and provider_failure, as payins do. No fee.',
  required: [
    'id', 'merchant_id', 'payin_id', 'status', 'amount', 'currency', 'recipient', 'reason', 'provider_reference', 'failure_reason',
    'provider_failure', 'metadata', 'history', 'created_at', 'updated_at',
  ],
  properties: {
    id: ref('Uuid'), merchant_id: ref('Uuid'), payin_id: ref('Uuid'),
    status: { type: 'string', enum: PAYMENT_STATUSES },
    amount: { type: 'string', pattern: '^[0-9]+$', description: 'Whole francs, decimal string' },
    currency: ref('Currency'),
    recipient: ref('RailParty'),
    reason: { type: ['string', 'null'] },
    provider_reference: { type: ['string', 'null'] },
    ...failureProperties,
    metadata: ref('Metadata'),
    history: { type: 'array', items: ref('StatusHistoryEntry') },
    created_at: ref('DateTime'), updated_at: ref('DateTime'),
    _meta: ref('Meta'),
  },
};

/** The list parameters of payments, without customer_id (a refund names its payin), with payin_id. */
const listParameters = [
  ...listParamsWith(PAYMENT_STATUSES).filter((p) => p.name !== 'customer_id'),
  { name: 'payin_id', in: 'query', schema: { type: 'string', format: 'uuid' }, description: 'Only the refunds of this payin' },
];

/** The amount asked: whole francs above zero (the payin's refundable amount bounds it: refund_exceeds_payin). */
function amountOf(raw: string | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  const amount = parseAmount(raw, 'amount');
  if (amount <= 0n) throw new DomainError('bad_request', 'amount must be above zero', [{ field: 'amount', message: 'must be at least 1' }]);
  return amount;
}

interface Row { body: Record<string, unknown> }

export const refundsModule: ApiModule = {
  schemas: { RefundCreate: createRequest, Refund: refundSchema },
  paths: {
    '/refunds': {
      post: {
        ...merchant, 'x-scope': 'refunds:write', operationId: 'createRefund', summary: 'Refund a completed payin, in full or in part', 'x-idempotent': true,
        description:
          'Pays amount (default: what is left) back to the payin\'s source. The non-failed refunds of a payin never sum to more than ' +
          'its send_amount (400 refund_exceeds_payin); only a completed payin (400 refund_not_allowed) of this merchant (400 ' +
          'payin_not_found). amount is held in the wallet at once (400 insufficient_balance if short); answers 201 pending; ' +
          'refund.completed or refund.failed follows. Idempotent.',
        parameters: [idempotencyHeader], requestBody: body(ref('RefundCreate')),
        responses: { 201: json(ref('Refund'), 'Created (status pending)'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
      get: {
        ...merchant, 'x-scope': 'refunds:read', operationId: 'listRefunds', summary: 'List refunds, newest first',
        description: 'Filters: status, payin_id, created_from and created_to (inclusive).',
        parameters: listParameters,
        responses: { 200: json(listOf(ref('Refund'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/refunds/{refund_id}': {
      get: {
        ...merchant, 'x-scope': 'refunds:read', operationId: 'getRefund', summary: 'Read a refund',
        description: 'The refund with its status history.',
        parameters: [idParam('refund_id')], responses: { 200: json(ref('Refund')), 401: errors[401], 404: errors[404] },
      },
    },
  },
  handlers: {
    createRefund: async (ctx: Ctx) => {
      invariant(ctx.idempotency, 'createRefund runs under an idempotency claim');
      const { state, existed } = await createRefund(ctx.services, {
        refundId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, payinId: ctx.body.payin_id,
        amount: amountOf(ctx.body.amount), reason: ctx.body.reason ?? null, metadata: ctx.body.metadata ?? {},
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: renderRefund(state), replayed: existed };
    },
    getRefund: async (ctx) => {
      const row = (await ctx.services.knex('refunds').where({ id: ctx.params.refund_id, merchant_id: ctx.merchantId }).first('body')) as Row | undefined;
      if (!row) throw new DomainError('not_found', 'Refund not found');
      return { status: 200, body: row.body };
    },
    listRefunds: async (ctx) => {
      const { knex } = ctx.services;
      const q = knex('refunds').select('body').where({ merchant_id: ctx.merchantId });
      if (ctx.query.payin_id !== undefined) q.where({ payin_id: ctx.query.payin_id });
      if (ctx.query.status !== undefined) q.where({ status: ctx.query.status });
      return { status: 200, body: await paginate(knex, q, listRequest(ctx.query), (r: Row) => r.body) };
    },
  },
};
