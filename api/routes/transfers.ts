// Merchant API: two-leg transfers (seed: Transfers; CONTRACT.md §4, §5). Create from an active
// transfer quote holding the payout amount, read, list, relaunch a failed disbursement.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, listOf, listParams, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { partyProblems } from '../../domain/payment.ts';
import { createTransfer, relaunchPayout } from '../../commands/transfers.ts';
import { listRequest, paginate } from '../../projections/pagination.ts';
import { renderTransfer } from '../../projections/views/transfer.ts';
import { failureProperties, QuotePricing } from './money-schemas.ts';

const tags = ['Transfers'];
const merchant = { 'x-auth': 'merchant' as const, tags };
const STATUSES = ['pending', 'collecting', 'disbursing', 'completed', 'failed'];
const LEG_STATUSES = ['not_started', 'pending', 'completed', 'failed'];
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const amount = { type: 'string', pattern: '^[0-9]+$' };

const createRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['quote_id', 'customer_id', 'payer', 'recipient'],
  properties: {
    quote_id: ref('Uuid'),
    customer_id: ref('Uuid'),
    payment_reason_code: text(100),
    sender_source_of_funds: text(200),
    sender_occupation: text(200),
    payer: { ...ref('RailParty'), description: "Must match the quote's payer operator (its country and rail)" },
    recipient: { ...ref('Recipient'), description: "Must match the quote's recipient operator (its country and rail)" },
    otp: { type: 'string', pattern: '^[0-9]{4,8}$', description: 'One-time password for the collection, required by SN_ORANGE_MOMO and CI_ORANGE_MOMO. Never stored in clear, never returned.' },
    metadata: ref('Metadata'),
  },
};

const relaunchRequest = {
  type: 'object',
  additionalProperties: false,
  properties: {
    payout_amount: { ...ref('Amount'), description: "Defaults to the previous attempt's amount" },
    recipient: { ...ref('Recipient'), description: "Defaults to the previous attempt's recipient; must keep the quote's recipient operator" },
  },
};

const transferPricing = {
  type: 'object',
  description:
    "The quote's pricing (how total_fee was computed) and what a relaunch changed. The fee is charged once, on the " +
    'collection (payin_amount − total_fee is credited in the payin currency), so total_fee and the fee figures never ' +
    'change. A relaunch with another payout_amount changes only the amount disbursed: payout_amount = ' +
    'quoted_payout_amount + payout_adjustment, so receive_amount = send_amount − total_fee + payout_adjustment; the ' +
    "adjustment is not a fee: it comes from (or stays in) the merchant's payout-currency wallet.",
  required: [...QuotePricing.required, 'fee_charged_on', 'quoted_payout_amount', 'payout_amount', 'payout_adjustment'],
  properties: {
    ...QuotePricing.properties,
    fee_charged_on: { type: 'string', enum: ['collection'], description: 'The leg whose amount the fee is taken from' },
    quoted_payout_amount: { ...amount, description: "The quote's payout_amount (payin_amount − total_fee)" },
    payout_amount: { ...amount, description: "The current disbursement attempt's amount" },
    payout_adjustment: { type: 'string', pattern: '^-?[0-9]+$', description: 'payout_amount − quoted_payout_amount, signed; "0" unless a relaunch changed the amount' },
  },
};

const leg = {
  type: 'object',
  required: [
    'leg_reference', 'status', 'provider_reference', 'operator_code', 'amount', 'currency', 'started_at', 'completed_at', 'failed_at', 'failure_reason',
    'provider_failure',
  ],
  properties: {
    leg_reference: { type: ['string', 'null'] }, status: { type: 'string' }, provider_reference: { type: ['string', 'null'] },
    operator_code: { type: ['string', 'null'] }, amount, currency: ref('Currency'),
    started_at: nullable(ref('DateTime')), completed_at: nullable(ref('DateTime')), failed_at: nullable(ref('DateTime')),
    ...failureProperties,
  },
};

const transferSchema = {
  type: 'object',
  description:
    'A two-leg transfer. status: pending (created) → collecting (collection started; payin_status pending, payout_status ' +
    'not_started) → disbursing (collection completed; payout_status pending) → completed | failed. A collection failure ' +
    'fails the transfer with payout_status not_started; a disbursement failure fails it with payin_status completed and ' +
    'payout_status failed, and relaunch-payout then starts a new disbursement attempt (status disbursing again). ' +
    'execution lists the collection leg and every disbursement attempt, each failed one with its failure_reason and provider_failure.',
  required: [
    'id', 'merchant_id', 'customer_id', 'quote_id', 'status', 'payin_status', 'payout_status', 'send_amount', 'send_currency',
    'receive_amount', 'receive_currency', 'payin_amount', 'payin_currency', 'payout_amount', 'payout_currency', 'total_fee',
    'corridor_code', 'corridor_type', 'payer_operator_code', 'recipient_operator_code', 'payer', 'recipient', 'payment_reason_code',
    'sender_source_of_funds', 'sender_occupation', 'metadata', 'pricing', 'wallet_impact', 'collection_reference',
    'collection_completed_at', 'disbursement_reference', 'disbursement_completed_at', 'disbursement_failed_at', 'completed_at',
    'failure_reason', 'provider_failure', 'execution', 'history', 'created_at', 'updated_at',
  ],
  properties: {
    id: ref('Uuid'), merchant_id: ref('Uuid'), customer_id: ref('Uuid'), quote_id: ref('Uuid'),
    status: { type: 'string', enum: STATUSES },
    payin_status: { type: 'string', enum: LEG_STATUSES }, payout_status: { type: 'string', enum: LEG_STATUSES },
    send_amount: amount, send_currency: ref('Currency'), receive_amount: amount, receive_currency: ref('Currency'),
    payin_amount: amount, payin_currency: ref('Currency'), payout_amount: amount, payout_currency: ref('Currency'),
    total_fee: amount, corridor_code: { type: 'string' }, corridor_type: { type: 'string', enum: ['domestic', 'cross_border'] },
    payer_operator_code: { type: 'string' }, recipient_operator_code: { type: 'string' },
    payer: ref('RailParty'), recipient: ref('Recipient'),
    payment_reason_code: { type: ['string', 'null'] }, sender_source_of_funds: { type: ['string', 'null'] }, sender_occupation: { type: ['string', 'null'] },
    metadata: ref('Metadata'), pricing: ref('TransferPricing'), wallet_impact: ref('WalletImpact'),
    collection_reference: { type: ['string', 'null'] }, collection_completed_at: nullable(ref('DateTime')),
    disbursement_reference: { type: ['string', 'null'] }, disbursement_completed_at: nullable(ref('DateTime')),
    disbursement_failed_at: nullable(ref('DateTime')), completed_at: nullable(ref('DateTime')),
    failure_reason: { ...failureProperties.failure_reason, description: 'Why it failed: the failed leg\'s failure_reason; null unless failed' },
    provider_failure: { ...failureProperties.provider_failure, description: 'The failed leg\'s provider_failure; null unless failed' },
    execution: {
      type: 'object',
      required: ['collection', 'disbursements'],
      properties: {
        collection: leg,
        disbursements: { type: 'array', items: { ...leg, required: ['attempt', ...leg.required], properties: { ...leg.properties, attempt: { type: 'integer' } } } },
      },
    },
    history: { type: 'array', items: ref('StatusHistoryEntry') },
    created_at: ref('DateTime'), updated_at: ref('DateTime'), _meta: ref('Meta'),
  },
};

interface Row { body: Record<string, unknown> }
const meta = (ctx: Ctx) => ({ requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
const listParameters = [
  ...listParams.map((p) => (p.name === 'status' ? { ...p, schema: { type: 'string', enum: STATUSES } } : p)),
  { name: 'payin_status', in: 'query', schema: { type: 'string', enum: LEG_STATUSES } },
  { name: 'payout_status', in: 'query', schema: { type: 'string', enum: LEG_STATUSES } },
];

export const transfersModule: ApiModule = {
  schemas: { Transfer: transferSchema, TransferPricing: transferPricing, TransferCreate: createRequest, TransferRelaunch: relaunchRequest },
  paths: {
    '/transfers': {
      post: {
        ...merchant, 'x-scope': 'transfers:write', operationId: 'createTransfer', 'x-idempotent': true,
        description:
          'Starts a two-leg transfer from an active transfer quote: the payout amount is held in the payout currency, ' +
          'the payer is collected, then the recipient is paid. Answers 201 pending; transfer.* events follow. Idempotent. ' +
          'Refused (400 operator_unavailable, nothing held, the quote not consumed) while the payer\'s operator is closed ' +
          'for payins or the recipient\'s for payouts.',
        summary: 'Create a transfer from an active transfer quote: collect from the payer, then disburse to the recipient',
        parameters: [idempotencyHeader], requestBody: body(ref('TransferCreate')),
        responses: { 201: json(ref('Transfer'), 'Created (status pending)'), 400: errors[400], 401: errors[401], 409: errors[409] },
      },
      get: {
        ...merchant, 'x-scope': 'transfers:read', operationId: 'listTransfers', summary: 'List transfers, newest first',
        description: 'Transfers, newest first. Filters: status, payin_status, payout_status, customer_id, created_from and created_to (inclusive).',
        parameters: listParameters, responses: { 200: json(listOf(ref('Transfer'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/transfers/{transfer_id}': {
      get: {
        ...merchant, 'x-scope': 'transfers:read', operationId: 'getTransfer', summary: 'Read a transfer with both legs',
        description: 'The transfer with both legs (execution), its status history and wallet impact.',
        parameters: [idParam('transfer_id')], responses: { 200: json(ref('Transfer')), 401: errors[401], 404: errors[404] },
      },
    },
    '/transfers/{transfer_id}/relaunch-payout': {
      post: {
        ...merchant, 'x-scope': 'transfers:write', operationId: 'relaunchTransferPayout', 'x-idempotent': true,
        summary: 'Retry a failed disbursement without collecting from the payer again',
        description: 'Allowed only when status is failed, payin_status completed and payout_status failed (else 400 relaunch_not_allowed). ' +
          'The payout amount is held again (400 insufficient_balance if short). Answers the transfer in disbursing with payout_status pending.',
        parameters: [idParam('transfer_id'), idempotencyHeader], requestBody: { ...body(ref('TransferRelaunch')), required: false },
        responses: { 200: json(ref('Transfer')), 400: errors[400], 401: errors[401], 404: errors[404], 409: errors[409] },
      },
    },
  },
  // Beside a schema error, the party checks that need no quote (module.ts BodyCheck).
  bodyChecks: {
    createTransfer: (body) => [...partyProblems(body?.payer, 'payer'), ...partyProblems(body?.recipient, 'recipient')],
    relaunchTransferPayout: (body) => partyProblems(body?.recipient, 'recipient'),
  },
  handlers: {
    createTransfer: async (ctx) => {
      invariant(ctx.idempotency, 'createTransfer runs under an idempotency claim');
      const b = ctx.body;
      const { state, existed } = await createTransfer(ctx.services, {
        transferId: ctx.idempotency.resourceId, fresh: ctx.idempotency.fresh, merchantId: ctx.merchantId, customerId: b.customer_id, quoteId: b.quote_id,
        payer: b.payer, recipient: b.recipient, otp: b.otp, paymentReasonCode: b.payment_reason_code ?? null,
        senderSourceOfFunds: b.sender_source_of_funds ?? null, senderOccupation: b.sender_occupation ?? null, metadata: b.metadata ?? {},
      }, meta(ctx));
      return { status: 201, body: renderTransfer(state), replayed: existed };
    },
    getTransfer: async (ctx) => {
      const row = (await ctx.services.knex('transfers').where({ id: ctx.params.transfer_id, merchant_id: ctx.merchantId }).first('body')) as Row | undefined;
      if (!row) throw new DomainError('not_found', 'Transfer not found');
      return { status: 200, body: row.body };
    },
    listTransfers: async (ctx) => {
      const { knex } = ctx.services;
      const q = knex('transfers').select('body').where({ merchant_id: ctx.merchantId });
      for (const f of ['customer_id', 'status', 'payin_status', 'payout_status']) {
        if (ctx.query[f] !== undefined) q.where({ [f]: ctx.query[f] });
      }
      return { status: 200, body: await paginate(knex, q, listRequest(ctx.query), (r: Row) => r.body) };
    },
    relaunchTransferPayout: async (ctx) => {
      const { state, existed } = await relaunchPayout(ctx.services, {
        transferId: ctx.params.transfer_id!, merchantId: ctx.merchantId,
        payoutAmount: ctx.body.payout_amount, recipient: ctx.body.recipient, relaunchId: ctx.idempotency?.resourceId,
      }, meta(ctx));
      return { status: 200, body: renderTransfer(state), replayed: existed };
    },
  },
};
