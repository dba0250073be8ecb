// Merchant API: bulk payouts (CONTRACT §10). POST /payouts/bulk creates up to 100 payouts in one
// request, each item decided as its own POST /payouts would be (commands/payouts-bulk.ts): per-item
// `status` (the HTTP status that call would have given), `payout` on 201, `error` otherwise. A
// schema error anywhere (duplicate references included) refuses the whole batch and does nothing.
// GET /payouts/bulk/{batch_id} answers the same batch with each payout as it is now.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, ref } from '../openapi/common.ts';
import { DomainError, invariant, type ErrorDetail } from '../../domain/errors.ts';
import type { PayoutBatchCreated } from '../../domain/payout-batch.ts';
import { partyProblems } from '../../domain/payment.ts';
import { createPayoutBatch } from '../../commands/payouts-bulk.ts';
import { renderPayout } from '../../projections/views/payout.ts';
import { errorBody, STATUS_OF } from '../errors.ts';
import { payoutsModule } from './payouts.ts';

const tags = ['Payouts'];
const merchant = { 'x-auth': 'merchant' as const, tags };
const MAX_BATCH_ITEMS = 100;

const single = payoutsModule.schemas!.PayoutCreate as { required: string[]; properties: Record<string, unknown> };

const schemas = {
  PayoutBulkItem: {
    ...single,
    description: 'The body of POST /payouts, plus the merchant\'s reference of the item (unique within the batch)',
    required: ['reference', ...single.required],
    properties: { reference: { type: 'string', minLength: 1, maxLength: 100, description: 'Unique within the batch' }, ...single.properties },
  },
  PayoutBulkCreate: {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: { items: { type: 'array', minItems: 1, maxItems: MAX_BATCH_ITEMS, items: ref('PayoutBulkItem') } },
  },
  PayoutBatchResult: {
    type: 'object',
    description: 'One item\'s outcome: what its own POST /payouts would have answered.',
    required: ['reference', 'status'],
    properties: {
      reference: { type: 'string' },
      status: { type: 'integer', description: 'The HTTP status the item\'s own POST /payouts would have given (201 created)' },
      payout: { ...ref('Payout'), description: 'On 201: the payout (on GET /payouts/bulk/{id}, as it is now)' },
      error: { ...ref('Error'), description: 'Otherwise: the error body that call would have answered' },
    },
  },
  PayoutBatch: {
    type: 'object',
    required: ['id', 'created_at', 'items'],
    properties: {
      id: ref('Uuid'), created_at: ref('DateTime'),
      items: { type: 'array', items: ref('PayoutBatchResult'), description: 'In the order of the request\'s items' },
      _meta: ref('Meta'),
    },
  },
};

/** The problems the schema cannot see: a reference used twice, a recipient incomplete for its rail. */
function batchProblems(b: any): ErrorDetail[] {
  if (!Array.isArray(b?.items)) return [];
  const items = b.items as Array<Record<string, unknown> | null>;
  const first = new Map<unknown, number>();
  const details: ErrorDetail[] = [];
  items.forEach((item, i) => {
    const reference = item?.reference;
    if (typeof reference === 'string' && first.has(reference)) {
      details.push({ field: `items.${i}.reference`, message: `must be unique within the batch (items.${first.get(reference)}.reference is the same)` });
    } else if (typeof reference === 'string') first.set(reference, i);
    details.push(...partyProblems(item?.recipient, `items.${i}.recipient`));
  });
  return details;
}

/** The batch with each payout given (by id), each item as its own POST /payouts would have answered. */
function renderBatch(batch: PayoutBatchCreated, payoutBody: (id: string) => unknown): Record<string, unknown> {
  return {
    id: batch.batch_id,
    created_at: batch.at,
    items: batch.items.map((item) => item.payout_id
      ? { reference: item.reference, status: 201, payout: payoutBody(item.payout_id) }
      : { reference: item.reference, status: STATUS_OF[item.error!.code], error: errorBody(item.error!.code, item.error!.message, item.error!.details) }),
  };
}

export const payoutsBulkModule: ApiModule = {
  schemas,
  paths: {
    '/payouts/bulk': {
      post: {
        ...merchant, 'x-scope': 'payouts:write', operationId: 'createPayoutBatch', summary: 'Create up to 100 payouts in one request', 'x-idempotent': true,
        description:
          'Each item is the body of POST /payouts plus a `reference` unique within the batch, and is decided exactly as its own ' +
          'POST /payouts would be (its own quote consumed, its own hold and provider leg); one item\'s refusal never stops ' +
          'another. Answers 201 with each item\'s `status`, and `payout` (201) or `error`. A schema error anywhere (a repeated ' +
          'reference, more than 100 items) refuses the whole batch with 400 and does nothing. Idempotent: the key replays the batch.',
        parameters: [idempotencyHeader], requestBody: body(ref('PayoutBulkCreate')),
        responses: { 201: json(ref('PayoutBatch'), 'Created: each item\'s outcome'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
    },
    '/payouts/bulk/{batch_id}': {
      get: {
        ...merchant, 'x-scope': 'payouts:read', operationId: 'getPayoutBatch', summary: 'Read a bulk payout request',
        description: 'The batch as created, each created payout as it is now (its current status).',
        parameters: [idParam('batch_id')], responses: { 200: json(ref('PayoutBatch')), 401: errors[401], 404: errors[404] },
      },
    },
  },
  bodyChecks: { createPayoutBatch: batchProblems },
  handlers: {
    createPayoutBatch: async (ctx: Ctx) => {
      invariant(ctx.idempotency, 'createPayoutBatch runs under an idempotency claim');
      // A schema error the schema cannot express: the whole batch is refused, nothing done (the key freed).
      const duplicates = batchProblems(ctx.body).filter((d) => d.field.endsWith('.reference'));
      if (duplicates.length > 0) throw new DomainError('bad_request', 'The request body is invalid', duplicates);
      const items = (ctx.body.items as Array<Record<string, any>>).map((b) => ({
        reference: b.reference, customerId: b.customer_id, quoteId: b.quote_id, recipient: b.recipient,
        paymentReasonText: b.payment_reason_text, metadata: b.metadata ?? {},
      }));
      const { batch, payouts, existed } = await createPayoutBatch(ctx.services, {
        batchId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, items,
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: renderBatch(batch, (id) => renderPayout(payouts.get(id)!)), replayed: existed };
    },
    getPayoutBatch: async (ctx) => {
      const { knex } = ctx.services;
      const row = (await knex('payout_batches').where({ id: ctx.params.batch_id, merchant_id: ctx.merchantId }).first('body')) as
        { body: PayoutBatchCreated } | undefined;
      if (!row) throw new DomainError('not_found', 'Payout batch not found');
      const ids = row.body.items.flatMap((i) => (i.payout_id ? [i.payout_id] : []));
      const rows = ids.length === 0 ? [] : (await knex('payouts').whereIn('id', ids).select('id', 'body')) as Array<{ id: string; body: unknown }>;
      const bodies = new Map(rows.map((r) => [r.id, r.body]));
      // The batch and its payouts are projected in the same transaction (one projector batch): both or neither.
      return { status: 200, body: renderBatch(row.body, (id) => {
        invariant(bodies.has(id), `payout ${id} of batch ${row.body.batch_id} is in the read model`);
        return bodies.get(id);
      }) };
    },
  },
};
