// Merchant API: quotes (seed "Quote"; CONTRACT.md §3, §5). Create per flow (idempotent), read, list.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { createQuote } from '../../commands/quotes.ts';
import type { QuoteRequest } from '../../domain/quote-pricing.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';
import { renderQuote, withQuoteStatus } from '../../projections/views/quote.ts';
import { listParamsWith, moneySchemas } from './money-schemas.ts';

const tags = ['Quotes'];
const merchant = { 'x-auth': 'merchant' as const, tags };
const meta = (ctx: Ctx) => ({ requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });

const legQuote = {
  type: 'object',
  additionalProperties: false,
  required: ['country_code', 'rail_type', 'send_amount', 'send_currency'],
  properties: {
    customer_id: ref('Uuid'),
    country_code: ref('CountryCode'),
    operator_code: { type: 'string', minLength: 1, maxLength: 40, description: 'Required for mobile_money (every sandbox operator)' },
    rail_type: ref('RailType'),
    send_amount: { ...ref('Amount'), description: 'Whole francs ("5000" or "5000.00"); 100 to 1,000,000' },
    send_currency: ref('Currency'),
  },
};

const transferQuote = {
  type: 'object',
  additionalProperties: false,
  required: ['payer_operator_code', 'recipient_operator_code', 'payout_currency'],
  description:
    'Give payin_amount (the fee comes out of it) or payout_amount (the payin is the smallest amount that leaves exactly ' +
    'that payout after the fee), not both. send_amount/send_currency are accepted as another name of payin_amount/payin_currency. ' +
    'The corridor is derived from the operators\' countries; corridor_code, if given, must match it.',
  properties: {
    customer_id: ref('Uuid'),
    corridor_code: { type: 'string', pattern: '^[A-Z]{2}-[A-Z]{2}-[A-Z]{3}-[A-Z]{3}$' },
    payer_operator_code: { type: 'string', minLength: 1, maxLength: 40 },
    recipient_operator_code: { type: 'string', minLength: 1, maxLength: 40 },
    payin_amount: ref('Amount'),
    payin_currency: ref('Currency'),
    payout_amount: ref('Amount'),
    payout_currency: ref('Currency'),
    send_amount: ref('Amount'),
    send_currency: ref('Currency'),
  },
};

const created = { 201: json(ref('Quote'), 'Created'), 400: errors[400], 401: errors[401], 409: errors[409] };

function transferRequest(b: Record<string, string | undefined>): QuoteRequest {
  const same = (a: string | undefined, alias: string | undefined, field: string, aliasField: string) => {
    if (a !== undefined && alias !== undefined && a !== alias) {
      throw new DomainError('bad_request', `${field} and ${aliasField} differ`, [{ field: aliasField, message: `must equal ${field} when both are given` }]);
    }
    return a ?? alias;
  };
  const payinAmount = same(b.payin_amount, b.send_amount, 'payin_amount', 'send_amount');
  const payinCurrency = same(b.payin_currency, b.send_currency, 'payin_currency', 'send_currency');
  if (payinCurrency === undefined) throw new DomainError('bad_request', 'payin_currency is required', [{ field: 'payin_currency', message: 'is required' }]);
  if (payinAmount !== undefined && b.payout_amount !== undefined) {
    throw new DomainError('bad_request', 'Give payin_amount or payout_amount, not both', [{ field: 'payout_amount', message: 'cannot be given with payin_amount' }]);
  }
  if (payinAmount === undefined && b.payout_amount === undefined) {
    throw new DomainError('bad_request', 'payin_amount or payout_amount is required', [{ field: 'payin_amount', message: 'is required unless payout_amount is given' }]);
  }
  return {
    flow: 'transfer', payerOperatorCode: b.payer_operator_code!, recipientOperatorCode: b.recipient_operator_code!,
    corridorCode: b.corridor_code, payinCurrency, payoutCurrency: b.payout_currency!, payinAmount, payoutAmount: b.payout_amount,
  };
}

async function create(ctx: Ctx, request: QuoteRequest) {
  invariant(ctx.idempotency, 'quote creation runs under an idempotency claim');
  const { state, existed } = await createQuote(ctx.services, {
    quoteId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, customerId: ctx.body.customer_id ?? null, request,
  }, meta(ctx));
  return { status: 201, body: renderQuote(state, ctx.services.clock.now()), replayed: existed };
}

const legRequest = (flow: 'payin' | 'payout', b: Record<string, string>): QuoteRequest => ({
  flow, countryCode: b.country_code!, operatorCode: b.operator_code, railType: b.rail_type!, sendAmount: b.send_amount!, sendCurrency: b.send_currency!,
});

interface QuoteRow { body: Record<string, unknown> }

export const quotesModule: ApiModule = {
  schemas: { ...moneySchemas, QuotePayinRequest: legQuote, QuotePayoutRequest: legQuote, QuoteTransferRequest: transferQuote },
  paths: {
    '/quotes/payin': {
      post: {
        ...merchant, 'x-scope': 'quotes:write', operationId: 'createPayinQuote', summary: 'Quote a payin (collection)', 'x-idempotent': true,
        description:
          'Locks the fee, the amounts and the route of a collection for a ' +
          'few minutes (expires_at). Then POST /payins with its id. Idempotent. An operator closed for payins refuses it ' +
          '(400 operator_unavailable); a delayed one is said in operator_availability.',
        parameters: [idempotencyHeader], requestBody: body(ref('QuotePayinRequest')), responses: created,
      },
    },
    '/quotes/payout': {
      post: {
        ...merchant, 'x-scope': 'quotes:write', operationId: 'createPayoutQuote', summary: 'Quote a payout (disbursement)', 'x-idempotent': true,
        description:
          'Locks the fee, the amounts and the route of a disbursement for a ' +
          'few minutes (expires_at). Then POST /payouts with its id. Idempotent. An operator closed for payouts refuses it ' +
          '(400 operator_unavailable); a delayed one is said in operator_availability.',
        parameters: [idempotencyHeader], requestBody: body(ref('QuotePayoutRequest')), responses: created,
      },
    },
    '/quotes/transfer': {
      post: {
        ...merchant, 'x-scope': 'quotes:write', operationId: 'createTransferQuote', summary: 'Quote a two-leg transfer', 'x-idempotent': true,
        description:
          'Locks a two-leg transfer\'s fee and amounts: collect payin_amount from the payer, ' +
          'pay payout_amount to the recipient. The merchant needs the corridor enabled. Idempotent. Refused (400 ' +
          'operator_unavailable) while the payer\'s operator is closed for payins or the recipient\'s for payouts.',
        parameters: [idempotencyHeader], requestBody: body(ref('QuoteTransferRequest')), responses: created,
      },
    },
    '/quotes/{quote_id}': {
      get: {
        ...merchant, 'x-scope': 'quotes:read', operationId: 'getQuote', summary: 'Read a quote (status computed now: active, expired or consumed)',
        description:
          'The quote with its status computed when read: active, expired ' +
          'once past expires_at, consumed once a payment used it (consumed_by).',
        parameters: [idParam('quote_id')], responses: { 200: json(ref('Quote')), 401: errors[401], 404: errors[404] },
      },
    },
    '/quotes': {
      get: {
        ...merchant, 'x-scope': 'quotes:read', operationId: 'listQuotes', summary: 'List quotes, newest first',
        description: 'Filters: status (active, expired, consumed), customer_id, created_from and created_to (inclusive).',
        parameters: listParamsWith(['active', 'expired', 'consumed']),
        responses: { 200: json(listOf(ref('Quote'))), 400: errors[400], 401: errors[401] },
      },
    },
  },
  handlers: {
    createPayinQuote: (ctx) => create(ctx, legRequest('payin', ctx.body)),
    createPayoutQuote: (ctx) => create(ctx, legRequest('payout', ctx.body)),
    createTransferQuote: (ctx) => create(ctx, transferRequest(ctx.body)),
    getQuote: async (ctx) => {
      const row = (await ctx.services.knex('quotes').where({ id: ctx.params.quote_id, merchant_id: ctx.merchantId }).first('body')) as QuoteRow | undefined;
      if (!row) throw new DomainError('not_found', 'Quote not found');
      return { status: 200, body: withQuoteStatus(row.body, ctx.services.clock.now()) };
    },
    listQuotes: async (ctx) => {
      const { knex } = ctx.services;
      const now = ctx.services.clock.now();
      const q = knex('quotes').select('body').where({ merchant_id: ctx.merchantId });
      if (ctx.query.customer_id !== undefined) q.where({ customer_id: ctx.query.customer_id });
      if (ctx.query.status === 'consumed') q.where({ status: 'consumed' });
      if (ctx.query.status === 'active') q.where({ status: 'active' }).where('expires_at', '>', now);
      if (ctx.query.status === 'expired') q.where({ status: 'active' }).where('expires_at', '<=', now);
      const page = await paginate(knex, q, listRequest(ctx.query), (r: QuoteRow) => withQuoteStatus(r.body, now));
      return { status: 200, body: page };
    },
  },
};
