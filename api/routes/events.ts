// Webhook events (CONTRACT.md §7, §8): the merchant's events with their delivery state and
// attempts, newest first; one event; a redelivery on demand. And, for operators, rotating the
// webhook signing secret without re-sending the URL.
import type { ApiModule, Ctx } from '../module.ts';
import { errors, idParam, json, listOf, listParams, ref } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { paginate, listRequest } from '../../projections/pagination.ts';
import { requestRedelivery } from '../../commands/webhook-redeliveries.ts';
import { rotateFirstEndpointSecret } from '../../commands/webhook-endpoints.ts';
import {
  attemptsOf, DELIVERY_STATUSES, eventView, readEvent, type WebhookEventRow,
} from '../../projections/webhook-events.ts';
import { feedListParameters, feedOrderPage } from './event-stream.ts';

const tags = ['Events'];
const statusEnum = { type: 'string', enum: DELIVERY_STATUSES };

const schemas = {
  WebhookAttempt: {
    type: 'object',
    required: ['endpoint_id', 'attempt', 'trigger', 'attempted_at', 'url', 'status_code', 'error', 'duration_ms', 'succeeded'],
    properties: {
      endpoint_id: { ...ref('Uuid'), description: 'The webhook endpoint attempted (each has its own attempts and schedule)' },
      attempt: { type: 'integer', description: "1 for the endpoint's first attempt; manual redeliveries are numbered on" },
      trigger: { type: 'string', enum: ['scheduled', 'manual'] },
      attempted_at: ref('DateTime'),
      url: { type: ['string', 'null'] },
      status_code: { type: ['integer', 'null'], description: 'HTTP status answered; null when none (time-out, refused address, network error)' },
      error: { type: ['string', 'null'] },
      duration_ms: { type: 'integer' },
      succeeded: { type: 'boolean' },
    },
  },
  WebhookEvent: {
    type: 'object',
    description: 'The envelope delivered to the webhook URL (id, event, created_at, data) plus its delivery state.',
    required: [
      'id', 'event', 'created_at', 'data', 'delivery_status', 'attempt_count', 'next_attempt_at', 'last_attempt_at', 'delivered_at', 'attempts',
    ],
    properties: {
      id: ref('Uuid'),
      event: ref('WebhookEventName'),
      created_at: ref('DateTime'),
      data: {
        type: 'object',
        required: ['type', 'id', 'object'],
        properties: {
          type: ref('WebhookResourceType'),
          id: ref('Uuid'),
          object: { type: 'object', description: 'Snapshot of the resource at event time: the schema of data.type (Payin, Payout, Transfer; see the webhooks section)' },
        },
      },
      delivery_status: { ...statusEnum, description: 'pending (attempts scheduled), delivered (acknowledged by a 2xx), failed (7 attempts failed), not_configured (no webhook URL when the event happened)' },
      attempt_count: { type: 'integer' },
      next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
      last_attempt_at: { type: ['string', 'null'], format: 'date-time' },
      delivered_at: { type: ['string', 'null'], format: 'date-time' },
      attempts: { type: 'array', items: ref('WebhookAttempt') },
    },
  },
};

const eventId = idParam('event_id');
const listParameters = [
  ...listParams.filter((p) => p.name !== 'status'),
  { name: 'status', in: 'query', schema: statusEnum, description: 'Same as delivery_status' },
  { name: 'delivery_status', in: 'query', schema: statusEnum },
  { name: 'event', in: 'query', schema: { type: 'string', maxLength: 100 }, description: 'Event name, e.g. payin.completed' },
  { name: 'type', in: 'query', schema: { type: 'string', maxLength: 40 }, description: 'Resource type (data.type): payin, payout or transfer' },
  { name: 'resource_id', in: 'query', schema: { type: 'string', format: 'uuid' }, description: 'The resource id (data.id)' },
  ...feedListParameters,
];

async function mustRead(ctx: Ctx) {
  const ev = await readEvent(ctx.services.knex, ctx.merchantId, ctx.params.event_id!);
  if (!ev) throw new DomainError('not_found', 'Event not found');
  return ev;
}

export const eventsModule: ApiModule = {
  schemas,
  paths: {
    '/events': {
      get: {
        'x-auth': 'merchant', tags, 'x-scope': 'events:read', operationId: 'listEvents',
        description:
          'The merchant\'s webhook events, newest first, each with its envelope (id, event, created_at, data), its delivery ' +
          'status and attempts. Filters: status or delivery_status, event, type, resource_id, customer_id, created_from, created_to. ' +
          'order=asc lists them oldest first in feed order, after=<event id> from a given event on (the order of GET /events/stream).',
        summary: 'Webhook events of this merchant, newest first (or oldest first after an event), with delivery status and attempts',
        parameters: listParameters,
        responses: { 200: json(listOf(ref('WebhookEvent'))), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/events/{event_id}': {
      get: {
        'x-auth': 'merchant', tags, 'x-scope': 'events:read', operationId: 'getEvent', summary: 'One webhook event with its attempts',
        description: 'One webhook event: the envelope as sent and every delivery attempt.',
        parameters: [eventId], responses: { 200: json(ref('WebhookEvent')), 401: errors[401], 404: errors[404] },
      },
    },
    '/events/{event_id}/redeliver': {
      post: {
        'x-auth': 'merchant', tags, 'x-scope': 'webhooks:write', operationId: 'redeliverEvent',
        summary: 'Deliver the event again now (one extra attempt, also after failed or delivered)',
        description: 'Answers 202 with the event as it stands; the attempt runs at once and shows in its attempts. ' +
          'The body sent is the same bytes as before, signed afresh, to every enabled endpoint whose filter takes the event. 400 when none does.',
        parameters: [eventId],
        responses: { 202: json(ref('WebhookEvent'), 'Accepted: the attempt is under way'), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/webhook/rotate-secret': {
      post: {
        'x-auth': 'admin', tags: ['Operator'], operationId: 'adminRotateWebhookSecret',
        'x-audit': { action: 'webhook.secret_rotated', target: { type: 'merchant', id: 'path:merchant_id' }, merchant: 'path:merchant_id' },
        summary: 'A new webhook signing secret for the configured URL (answered once)',
        description: "A new secret for the merchant's first webhook endpoint, at once: every attempt from now on is signed " +
          'with it (also retries of earlier events). 400 when the merchant has no endpoint.',
        parameters: [idParam('merchant_id')],
        responses: {
          200: json(ref('WebhookSecret')),
          400: errors[400], 401: errors[401], 404: errors[404],
        },
      },
    },
  },
  handlers: {
    listEvents: async (ctx) => {
      const { knex } = ctx.services;
      const q = ctx.query;
      const query = knex('webhook_events').where({ merchant_id: ctx.merchantId }).select('*');
      const status = q.delivery_status ?? q.status;
      if (q.delivery_status && q.status && q.delivery_status !== q.status) {
        throw new DomainError('bad_request', 'status and delivery_status disagree', [{ field: 'query.status', message: 'must equal delivery_status when both are given' }]);
      }
      if (status) query.where({ delivery_status: status });
      if (q.event) query.where({ event: q.event });
      if (q.type) query.where({ resource_type: q.type });
      if (q.resource_id) query.where({ resource_id: q.resource_id });
      if (q.customer_id) query.where({ customer_id: q.customer_id });
      // order=asc&after=: the feed order (CONTRACT §12, event-stream.ts); else newest first.
      const page = await feedOrderPage<WebhookEventRow, WebhookEventRow>(ctx, query, listRequest(q), (r) => r)
        ?? await paginate<WebhookEventRow, WebhookEventRow>(knex, query, listRequest(q), (r) => r);
      const attempts = await attemptsOf(knex, page.data.map((r) => r.id));
      return { status: 200, body: { ...page, data: page.data.map((r) => eventView(r, attempts)) } };
    },
    getEvent: async (ctx) => ({ status: 200, body: await mustRead(ctx) }),
    redeliverEvent: async (ctx) => {
      const ev = await mustRead(ctx);
      // To every enabled endpoint whose filter takes the event (CONTRACT.md §11).
      const sent = await requestRedelivery(ctx.services, ev, ctx.merchantId);
      if (sent === 0) throw new DomainError('bad_request', 'No enabled webhook endpoint takes this event');
      return { status: 202, body: ev };
    },
    adminRotateWebhookSecret: async (ctx) => {
      const r = await rotateFirstEndpointSecret(ctx.services, ctx.params.merchant_id!, { requestId: ctx.requestId, actor: 'operator' });
      return { status: 200, body: { url: r.url, signing_secret: r.signingSecret } };
    },
  },
};
