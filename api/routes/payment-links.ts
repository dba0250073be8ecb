// Merchant API: payment links (CONTRACT §16). Create (idempotent; 201), list, read, deactivate, and
// a link's payins. A link's status and URLs are rendered when answered (views/payment-link.ts):
// `expired` from expires_at at that moment, the URLs under PUBLIC_BASE_URL or the request's origin.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { MAX_DESCRIPTION_LENGTH, type PaymentLinkStatus } from '../../domain/payment-link.ts';
import { createPaymentLink, deactivatePaymentLink } from '../../commands/payment-links.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';
import { linkBaseUrl, paymentLinkRecord, renderPaymentLink, type PaymentLinkRecord } from '../../projections/views/payment-link.ts';
import { listParamsWith } from './money-schemas.ts';
import { PAYMENT_STATUSES } from './payins.ts';

const tags = ['Payment links'];
const merchant = { 'x-auth': 'merchant' as const, tags };
const LINK_STATUSES: PaymentLinkStatus[] = ['active', 'inactive', 'completed', 'expired'];

const createRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency', 'description'],
  properties: {
    amount: { ...ref('Amount'), description: 'What every payer pays, whole francs ("5000" or "5000.00"); 100 to 1,000,000. The merchant\'s payin fee comes out of it' },
    currency: ref('Currency'),
    description: { type: 'string', minLength: 1, maxLength: MAX_DESCRIPTION_LENGTH, pattern: '\\S', description: 'What is paid for, shown to the payer' },
    customer_id: { anyOf: [ref('Uuid'), { type: 'null' }], description: 'Every payin of the link is for this customer of the merchant; without it, each payer becomes a new customer (name, phone, country)' },
    expires_at: { anyOf: [ref('DateTime'), { type: 'null' }], description: 'When the link stops taking payments; must be in the future. Null or absent: never' },
    max_payments: {
      anyOf: [{ type: 'integer', minimum: 1, maximum: 1_000_000 }, { type: 'null' }],
      description: 'Completed payins the link takes (default 1); null: unlimited. A pending payin holds its place until it fails',
    },
    metadata: { ...ref('Metadata'), description: 'Stored, returned, and copied onto every payin of the link' },
  },
};

const linkSchema = {
  type: 'object',
  description:
    'A fixed amount a payer pays on the service\'s page at `url` (a QR code of it at `qr_svg_url`). Status: `active` (takes ' +
    'payments), `inactive` (deactivated), `completed` (max_payments payins completed) or `expired` (past expires_at; computed ' +
    'when read). payments_count counts completed payins. A payin in progress holds its place: while pending payins hold ' +
    'every place left, the page asks the payer to come back later, so a link never ends with more than max_payments completed payins.',
  required: [
    'id', 'url', 'qr_svg_url', 'status', 'amount', 'currency', 'description', 'payments_count', 'expires_at', 'max_payments',
    'customer_id', 'metadata', 'created_at', 'updated_at',
  ],
  properties: {
    id: ref('Uuid'),
    url: { type: 'string', format: 'uri', description: 'The payer\'s page (public): PUBLIC_BASE_URL/pay/{id}, else under the origin this request reached' },
    qr_svg_url: { type: 'string', format: 'uri', description: 'A QR code of `url` (image/svg+xml, public)' },
    status: { type: 'string', enum: LINK_STATUSES },
    amount: { type: 'string', pattern: '^[0-9]+$', description: 'Whole francs, decimal string' },
    currency: ref('Currency'),
    description: { type: 'string' },
    payments_count: { type: 'integer', minimum: 0, description: 'Completed payins' },
    expires_at: { anyOf: [ref('DateTime'), { type: 'null' }] },
    max_payments: { type: ['integer', 'null'], description: 'Null: unlimited' },
    customer_id: { anyOf: [ref('Uuid'), { type: 'null' }] },
    metadata: ref('Metadata'),
    created_at: ref('DateTime'), updated_at: ref('DateTime'),
    _meta: ref('Meta'),
  },
};

const linkId = idParam('payment_link_id');

interface Row { body: PaymentLinkRecord }

/** Where this request's links point (PUBLIC_BASE_URL, else the origin the request reached). */
function baseOf(ctx: Ctx): string {
  const { config } = ctx.services;
  const host = ctx.headers.host;
  return linkBaseUrl(config.providers.publicBaseUrl, typeof host === 'string' ? host : undefined, `http://${config.host}:${config.port}`);
}

const render = (ctx: Ctx, r: PaymentLinkRecord) => renderPaymentLink(r, ctx.services.clock.now(), baseOf(ctx));

async function mustRead(ctx: Ctx): Promise<PaymentLinkRecord> {
  const row = (await ctx.services.knex('payment_links').where({ id: ctx.params.payment_link_id, merchant_id: ctx.merchantId }).first('body')) as Row | undefined;
  if (!row) throw new DomainError('not_found', 'Payment link not found');
  return row.body;
}

export const paymentLinksModule: ApiModule = {
  schemas: { PaymentLinkCreate: createRequest, PaymentLink: linkSchema },
  paths: {
    '/payment-links': {
      post: {
        ...merchant, 'x-scope': 'payment_links:write', operationId: 'createPaymentLink', summary: 'Create a payment link', 'x-idempotent': true,
        description:
          'A link payers pay on the service\'s page, in the merchant\'s routing, pricing and operator availability. customer_id must ' +
          'be this merchant\'s (400 customer_not_found); expires_at must be in the future (400 bad_request naming expires_at). Idempotent.',
        parameters: [idempotencyHeader], requestBody: body(ref('PaymentLinkCreate')),
        responses: { 201: json(ref('PaymentLink'), 'Created (status active)'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
      get: {
        ...merchant, 'x-scope': 'payment_links:read', operationId: 'listPaymentLinks', summary: 'List payment links, newest first',
        description: 'Filters: status (active, inactive, completed, expired: computed now), customer_id, created_from and created_to (inclusive).',
        parameters: listParamsWith(LINK_STATUSES),
        responses: { 200: json(listOf(ref('PaymentLink'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/payment-links/{payment_link_id}': {
      get: {
        ...merchant, 'x-scope': 'payment_links:read', operationId: 'getPaymentLink', summary: 'Read a payment link (status computed now)',
        description: 'The link with its status and payments_count as they are now.',
        parameters: [linkId], responses: { 200: json(ref('PaymentLink')), 401: errors[401], 404: errors[404] },
      },
    },
    '/payment-links/{payment_link_id}/deactivate': {
      post: {
        ...merchant, 'x-scope': 'payment_links:write', operationId: 'deactivatePaymentLink', summary: 'Deactivate a payment link',
        description: 'The link takes no more payments (its page says so); payins already pending go on. Again: the same answer.',
        parameters: [linkId], responses: { 200: json(ref('PaymentLink'), 'The link, status inactive'), 401: errors[401], 404: errors[404] },
      },
    },
    '/payment-links/{payment_link_id}/payments': {
      get: {
        ...merchant, 'x-scope': 'payment_links:read', operationId: 'listPaymentLinkPayments', summary: 'List the payins made through a payment link, newest first',
        description: 'Every payin of the link, whatever its status. Filters: status, customer_id, created_from and created_to (inclusive).',
        parameters: [linkId, ...listParamsWith(PAYMENT_STATUSES)],
        responses: { 200: json(listOf(ref('Payin'))), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
  },
  handlers: {
    createPaymentLink: async (ctx) => {
      invariant(ctx.idempotency, 'createPaymentLink runs under an idempotency claim');
      const b = ctx.body;
      const { state, existed } = await createPaymentLink(ctx.services, {
        linkId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, amount: b.amount, currency: b.currency,
        description: b.description, customerId: b.customer_id ?? null, expiresAt: b.expires_at ?? null,
        maxPayments: b.max_payments === undefined ? 1 : b.max_payments, metadata: b.metadata ?? {},
      }, { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 201, body: render(ctx, paymentLinkRecord(state)), replayed: existed };
    },
    getPaymentLink: async (ctx) => ({ status: 200, body: render(ctx, await mustRead(ctx)) }),
    listPaymentLinks: async (ctx) => {
      const { knex } = ctx.services;
      const now = ctx.services.clock.now();
      const q = knex('payment_links').select('body').where({ merchant_id: ctx.merchantId });
      if (ctx.query.customer_id !== undefined) q.where({ customer_id: ctx.query.customer_id });
      const status = ctx.query.status as PaymentLinkStatus | undefined;
      if (status === 'inactive' || status === 'completed') q.where({ status });
      if (status === 'active') q.where({ status: 'active' }).where((w) => w.whereNull('expires_at').orWhere('expires_at', '>', now));
      if (status === 'expired') q.where({ status: 'active' }).where('expires_at', '<=', now);
      const base = baseOf(ctx);
      return { status: 200, body: await paginate(knex, q, listRequest(ctx.query), (r: Row) => renderPaymentLink(r.body, now, base)) };
    },
    deactivatePaymentLink: async (ctx) => {
      const state = await deactivatePaymentLink(ctx.services, { linkId: ctx.params.payment_link_id!, merchantId: ctx.merchantId },
        { requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
      return { status: 200, body: render(ctx, paymentLinkRecord(state)) };
    },
    listPaymentLinkPayments: async (ctx) => {
      await mustRead(ctx); // another merchant's link, or none: 404
      const { knex } = ctx.services;
      const q = knex('payins').select('body').where({ merchant_id: ctx.merchantId, payment_link_id: ctx.params.payment_link_id });
      if (ctx.query.customer_id !== undefined) q.where({ customer_id: ctx.query.customer_id });
      if (ctx.query.status !== undefined) q.where({ status: ctx.query.status });
      return { status: 200, body: await paginate(knex, q, listRequest(ctx.query), (r: { body: unknown }) => r.body) };
    },
  },
};
