// Webhook endpoints (CONTRACT.md §11): a merchant's several endpoints, each with its URL, event
// filter, status and signing secret (answered at creation, its Idempotency-Key's replays included, and
// at each rotation; never on a read). Commands: commands/webhook-endpoints.ts.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idempotencyHeader, idParam, json, ref } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import { endpointIn, filterableEvents, ALL_EVENTS, MAX_ENDPOINTS, type WebhookEndpoint } from '../../domain/webhook-endpoints.ts';
import * as C from '../../commands/webhook-endpoints.ts';

const tags = ['Webhook endpoints'];
const merchant = { 'x-auth': 'merchant' as const, tags };

const eventsFilter = {
  type: 'array', minItems: 1, maxItems: 50, uniqueItems: true,
  items: { type: 'string', enum: [ALL_EVENTS, ...filterableEvents()] },
  description: 'The event names this endpoint receives, or ["*"] for every event (the default)',
};
const url = { type: 'string', minLength: 1, maxLength: 2048, description: 'https, no credentials, a public host (CONTRACT §1)' };
const description = { type: ['string', 'null'], maxLength: 500 };

const schemas = {
  WebhookEndpoint: {
    type: 'object',
    required: ['id', 'url', 'enabled_events', 'description', 'status', 'created_at', 'updated_at'],
    properties: {
      id: ref('Uuid'),
      url: { type: 'string' },
      enabled_events: { type: 'array', items: { type: 'string' } },
      description: { type: ['string', 'null'] },
      status: { type: 'string', enum: ['enabled', 'disabled'], description: 'disabled: sent nothing (by request, after a 410 answer, or after 72 hours of failed attempts)' },
      created_at: ref('DateTime'),
      updated_at: ref('DateTime'),
    },
  },
  WebhookEndpointCreated: {
    allOf: [ref('WebhookEndpoint'), {
      type: 'object',
      required: ['signing_secret'],
      properties: { signing_secret: { type: 'string', description: 'Answered here (and to a retry with the same Idempotency-Key), never by a read: keep it in your secret store' } },
    }],
  },
  WebhookEndpointCreate: {
    type: 'object', additionalProperties: false, required: ['url'],
    properties: { url, enabled_events: eventsFilter, description },
  },
  WebhookEndpointUpdate: {
    type: 'object', additionalProperties: false, minProperties: 1,
    properties: { url, enabled_events: eventsFilter, description, status: { type: 'string', enum: ['enabled', 'disabled'] } },
  },
  WebhookSecretRotation: {
    type: 'object', additionalProperties: false,
    properties: {
      activate_after_seconds: {
        type: 'integer', minimum: 0, maximum: 604_800, default: C.DEFAULT_ACTIVATE_AFTER_SECONDS,
        description: 'How long the current secret keeps signing (0: the new one signs at once)',
      },
    },
  },
  WebhookSecretRotated: {
    type: 'object', required: ['signing_secret', 'activates_at'],
    properties: {
      signing_secret: { type: 'string', description: 'Shown once: add it to your receiver before activates_at' },
      activates_at: { ...ref('DateTime'), description: 'From this instant deliveries are signed with the new secret' },
    },
  },
};

function endpointView(e: WebhookEndpoint) {
  return {
    id: e.id, url: e.url, enabled_events: e.enabledEvents, description: e.description, status: e.status,
    created_at: e.createdAt, updated_at: e.updatedAt,
  };
}

const checkedUrl = (ctx: Ctx, raw: string) => C.checkedWebhookUrl(ctx.services, raw);

const meta = (ctx: Ctx) => ({ requestId: ctx.requestId, actor: `merchant:${ctx.merchantId}` });
const endpointId = idParam('endpoint_id');

async function mustFind(ctx: Ctx): Promise<WebhookEndpoint> {
  const all = await C.endpointsOf(ctx.services, ctx.merchantId);
  return endpointIn({ started: true, endpoints: all, deleted: [] }, ctx.params.endpoint_id!);
}

const paths: ApiModule['paths'] = {
  '/webhook-endpoints': {
    post: {
      ...merchant, 'x-scope': 'webhooks:write', operationId: 'createWebhookEndpoint', summary: 'Add a webhook endpoint (its signing secret is answered once)',
      description: `A URL that receives the events its filter names (every event by default), signed with a secret of its own. Idempotent. ` +
        `At most ${MAX_ENDPOINTS} per merchant (400 limit_exceeded). A retry with the same Idempotency-Key whose endpoint was ` +
        'deleted since answers 404 (it is never created again).',
      'x-idempotent': true,
      parameters: [idempotencyHeader],
      requestBody: body(ref('WebhookEndpointCreate')),
      responses: { 201: json(ref('WebhookEndpointCreated'), 'Created'), 400: errors[400], 401: errors[401], 404: errors[404], 409: errors[409] },
    },
    get: {
      ...merchant, 'x-scope': 'webhooks:read', operationId: 'listWebhookEndpoints', summary: 'The webhook endpoints, oldest first',
      description: 'Every endpoint of the merchant (never a signing secret). The first is the one the operator API sets.',
      responses: {
        200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('WebhookEndpoint') } } }),
        401: errors[401],
      },
    },
  },
  '/webhook-endpoints/{endpoint_id}': {
    get: {
      ...merchant, 'x-scope': 'webhooks:read', operationId: 'getWebhookEndpoint', summary: 'One webhook endpoint',
      description: 'The endpoint (never its signing secret); another merchant\'s is a 404.',
      parameters: [endpointId], responses: { 200: json(ref('WebhookEndpoint')), 401: errors[401], 404: errors[404] },
    },
    patch: {
      ...merchant, 'x-scope': 'webhooks:write', operationId: 'updateWebhookEndpoint', summary: 'Change an endpoint\'s URL, filter, description or status',
      description: 'Only the fields sent change. A disabled endpoint is sent nothing (its pending deliveries end failed) until enabled again.',
      parameters: [endpointId], requestBody: body(ref('WebhookEndpointUpdate')),
      responses: { 200: json(ref('WebhookEndpoint')), 400: errors[400], 401: errors[401], 404: errors[404] },
    },
    delete: {
      ...merchant, 'x-scope': 'webhooks:write', operationId: 'deleteWebhookEndpoint', summary: 'Remove an endpoint',
      description: 'It is sent nothing more; its pending deliveries end failed.',
      parameters: [endpointId], responses: { 204: { description: 'Deleted' }, 401: errors[401], 404: errors[404] },
    },
  },
  '/webhook-endpoints/{endpoint_id}/rotate-secret': {
    post: {
      ...merchant, 'x-scope': 'webhooks:write', operationId: 'rotateWebhookEndpointSecret', summary: 'A new signing secret, staged (answered once)',
      description: 'Deliveries keep the current secret until activates_at (default: a day), then use the new one: a receiver that ' +
        'accepts both secrets from now on never fails a verification. activate_after_seconds 0 switches at once.',
      parameters: [endpointId], requestBody: { required: false, content: { 'application/json': { schema: ref('WebhookSecretRotation') } } },
      responses: { 200: json(ref('WebhookSecretRotated')), 400: errors[400], 401: errors[401], 404: errors[404] },
    },
  },
};

export const webhookEndpointsModule: ApiModule = {
  schemas,
  paths,
  handlers: {
    createWebhookEndpoint: async (ctx) => {
      invariant(ctx.idempotency, 'createWebhookEndpoint runs under an idempotency claim');
      const r = await C.createEndpoint(ctx.services, ctx.merchantId, ctx.idempotency.resourceId, {
        url: await checkedUrl(ctx, ctx.body.url), enabledEvents: ctx.body.enabled_events ?? [ALL_EVENTS], description: ctx.body.description ?? null,
      }, meta(ctx));
      const view = endpointView(r.endpoint);
      // A retry whose first answer was lost gets the secret too (the same body, CONTRACT §6): the key
      // stores it sealed, and an earlier attempt's endpoint answers the secret it holds.
      const secret = r.signingSecret ?? ctx.services.secrets.decrypt(r.endpoint.secretSealed);
      const sealed = ctx.services.secrets.encrypt(secret);
      return {
        status: 201, body: { ...view, signing_secret: secret }, stored: { ...view, signing_secret: null, _sealed: { signing_secret: sealed } }, replayed: r.existed,
      };
    },
    listWebhookEndpoints: async (ctx) => ({ status: 200, body: { data: (await C.endpointsOf(ctx.services, ctx.merchantId)).map(endpointView) } }),
    getWebhookEndpoint: async (ctx) => ({ status: 200, body: endpointView(await mustFind(ctx)) }),
    updateWebhookEndpoint: async (ctx) => {
      const b = ctx.body;
      const e = await C.updateEndpoint(ctx.services, ctx.merchantId, {
        endpointId: ctx.params.endpoint_id!,
        ...(b.url !== undefined ? { url: await checkedUrl(ctx, b.url) } : {}),
        ...(b.enabled_events !== undefined ? { enabledEvents: b.enabled_events } : {}),
        ...(b.description !== undefined ? { description: b.description } : {}),
        ...(b.status !== undefined ? { status: b.status } : {}),
      }, meta(ctx));
      return { status: 200, body: endpointView(e) };
    },
    deleteWebhookEndpoint: async (ctx) => {
      await C.deleteEndpoint(ctx.services, ctx.merchantId, ctx.params.endpoint_id!, meta(ctx));
      return { status: 204, text: '', contentType: 'text/plain' };
    },
    rotateWebhookEndpointSecret: async (ctx) => {
      const after = ctx.body?.activate_after_seconds ?? C.DEFAULT_ACTIVATE_AFTER_SECONDS;
      const r = await C.rotateEndpointSecret(ctx.services, ctx.merchantId, ctx.params.endpoint_id!, after, meta(ctx));
      return { status: 200, body: { signing_secret: r.signingSecret, activates_at: r.activatesAt } };
    },
  },
};
