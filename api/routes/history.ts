// Event history: every event of a resource, in order, as the event store recorded it, with what led
// to it (the HTTP request, the event a worker reacted to). Merchant API:
// `GET /{payins|payouts|transfers|quotes|customers}/{id}/events` (the merchant's own resources only;
// another merchant's id is the same 404 as an unknown one). The operator's
// `GET /admin/streams/{stream}` (any stream) lives in routes/operations.ts and renders the same way.
//
// Reading the store directly is right here: the history is the store's record, not a read model,
// and no decision is taken from it.
//
// Secrets: events never hold an OTP (only `otp_required`/`otp_supplied` flags, see MONEY.md) nor a
// clear API secret; they do hold hashes and sealed values (`secret_hash`, `signing_secret_sealed`).
// Any field whose name says secret, password, token, seal or OTP is shown as "[redacted]" unless it
// is a plain true/false flag, whatever the event.
import type { ApiModule, Ctx, Operation } from '../module.ts';
import { errors, idParam, json, ref } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import type { RecordedEvent } from '../../infra/eventstore/types.ts';
import { streams } from '../../commands/streams.ts';

export const HISTORY_MAX_LIMIT = 1000;
const SECRET_FIELD = /secret|password|passcode|token|sealed|(^|_)otp($|_)|(^|_)pin($|_)/i;
export const REDACTED = '[redacted]';

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k, SECRET_FIELD.test(k) && typeof v !== 'boolean' && v !== null ? REDACTED : redact(v),
    ]));
  }
  return value;
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);

export function renderEvent(e: RecordedEvent) {
  return {
    id: e.id,
    stream: e.streamId,
    version: e.version,
    position: e.position.toString(),
    type: e.type,
    created_at: e.createdAt.toISOString(),
    data: redact(e.data),
    request_id: str(e.metadata.requestId),
    causation_id: str(e.metadata.causationId),
    correlation_id: str(e.metadata.correlationId),
    actor: str(e.metadata.actor),
  };
}

export const historySchemas = {
  RecordedEvent: {
    type: 'object',
    required: ['id', 'stream', 'version', 'position', 'type', 'created_at', 'data', 'request_id', 'causation_id'],
    properties: {
      id: ref('Uuid'),
      stream: { type: 'string', description: 'Stream name, e.g. payin-<id>, wallet-<merchant>-<currency>' },
      version: { type: 'integer', description: '1-based position inside the stream' },
      position: { type: 'string', description: 'Position in the global order (decimal string; only its order means something)' },
      type: { type: 'string' },
      created_at: ref('DateTime'),
      data: { type: 'object', description: 'The event as recorded; fields holding secrets (hashes, sealed values) are "[redacted]"' },
      request_id: { type: ['string', 'null'], description: 'X-Request-Id of the HTTP request that led to it' },
      causation_id: { type: ['string', 'null'], description: 'The event (or job) a worker reacted to when it appended this one' },
      correlation_id: { type: ['string', 'null'] },
      actor: { type: ['string', 'null'], description: 'merchant:<id>, operator, provider:<name>, or the worker' },
    },
  },
  EventHistory: {
    type: 'object',
    required: ['stream', 'data', 'has_more', 'next_from_version'],
    properties: {
      stream: { type: 'string' },
      data: { type: 'array', items: ref('RecordedEvent') },
      has_more: { type: 'boolean' },
      next_from_version: { type: ['integer', 'null'], description: 'Pass as from_version to read on' },
    },
  },
};

export const historyParams = [
  { name: 'from_version', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 }, description: 'First version to answer (1-based)' },
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: HISTORY_MAX_LIMIT, default: HISTORY_MAX_LIMIT } },
];

/** Events from `from_version` on, at most `limit`, or undefined when the stream has none at all. */
export async function readHistory(ctx: Ctx, streamId: string): Promise<{ events: RecordedEvent[]; body: unknown } | undefined> {
  const from = Number(ctx.query.from_version ?? 1);
  const limit = Number(ctx.query.limit ?? HISTORY_MAX_LIMIT);
  const events = await ctx.services.store.readStream(streamId, 1);
  if (events.length === 0) return undefined;
  const page = events.filter((e) => e.version >= from).slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = events[events.length - 1]!.version > (last?.version ?? from - 1);
  return {
    events,
    body: {
      stream: streamId, data: page.map(renderEvent), has_more: hasMore,
      next_from_version: hasMore ? (last ? last.version + 1 : from) : null,
    },
  };
}

interface Resource {
  path: string;
  param: string;
  name: string;
  tag: string;
  stream: (id: string) => string;
  operationId: string;
}

const RESOURCES: Resource[] = [
  { path: '/payins/{payin_id}/events', param: 'payin_id', name: 'Payin', tag: 'Payins', stream: streams.payin, operationId: 'getPayinEvents' },
  { path: '/payouts/{payout_id}/events', param: 'payout_id', name: 'Payout', tag: 'Payouts', stream: streams.payout, operationId: 'getPayoutEvents' },
  { path: '/refunds/{refund_id}/events', param: 'refund_id', name: 'Refund', tag: 'Refunds', stream: streams.refund, operationId: 'getRefundEvents' },
  { path: '/payment-links/{payment_link_id}/events', param: 'payment_link_id', name: 'Payment link', tag: 'Payment links', stream: streams.paymentLink, operationId: 'getPaymentLinkEvents' },
  { path: '/transfers/{transfer_id}/events', param: 'transfer_id', name: 'Transfer', tag: 'Transfers', stream: streams.transfer, operationId: 'getTransferEvents' },
  { path: '/quotes/{quote_id}/events', param: 'quote_id', name: 'Quote', tag: 'Quotes', stream: streams.quote, operationId: 'getQuoteEvents' },
  { path: '/customers/{customer_id}/events', param: 'customer_id', name: 'Customer', tag: 'Customers', stream: streams.customer, operationId: 'getCustomerEvents' },
];

function handler(r: Resource) {
  return async (ctx: Ctx) => {
    const h = await readHistory(ctx, r.stream(ctx.params[r.param]!));
    // Every resource's first event names its merchant: another merchant's resource is not found.
    const owner = h?.events[0]?.data.merchant_id;
    if (!h || owner !== ctx.merchantId) throw new DomainError('not_found', `${r.name} not found`);
    return { status: 200, body: h.body };
  };
}

export const historyModule: ApiModule = {
  schemas: historySchemas,
  paths: Object.fromEntries(RESOURCES.map((r) => [r.path, {
    get: {
      // A resource's history is part of the event log: events:read (CONTRACT §18).
      'x-auth': 'merchant', 'x-scope': 'events:read', tags: [r.tag], operationId: r.operationId,
      summary: `The ${r.name.toLowerCase()}'s event history, oldest first`,
      description: 'Every event of the resource in order, with its version, global position, time, data and the ' +
        'request (request_id) or event (causation_id) that led to it. Up to `limit` events from `from_version`.',
      parameters: [idParam(r.param), ...historyParams],
      responses: { 200: json(ref('EventHistory')), 400: errors[400], 401: errors[401], 404: errors[404] },
    } satisfies Operation,
  }])),
  handlers: Object.fromEntries(RESOURCES.map((r) => [r.operationId, handler(r)])),
};
