// Operator API (CONTRACT.md §2): merchants, status, API keys, webhook endpoint, routing, pricing.
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idParam, json, ref } from '../openapi/common.ts';
import * as C from '../../commands/merchants.ts';
import { configureFirstEndpoint } from '../../commands/webhook-endpoints.ts';
import * as M from '../../domain/merchant.ts';
import { ALL_SCOPES, EVERYTHING, type KeyScope } from '../../domain/api-key-scopes.ts';
import { DomainError } from '../../domain/errors.ts';
import { OPERATOR_CODES } from '../../domain/catalogue.ts';
import { checkUrl, UnsafeUrlError } from '../../infra/url-safety.ts';

const tags = ['Operator'];
const admin = { 'x-auth': 'admin' as const, tags };
const mid = idParam('merchant_id');
const kid = idParam('key_id');
const CORRIDOR_PATTERN = '^[A-Z]{2}-[A-Z]{2}-[A-Z]{3}-[A-Z]{3}$';
const corridorParam = {
  name: 'corridor_code', in: 'path', required: true, schema: { type: 'string', pattern: CORRIDOR_PATTERN }, 'x-malformed': 'bad_request',
  description: '<payer_country>-<recipient_country>-<payer_currency>-<recipient_currency>, e.g. CM-SN-XAF-XOF',
};
const meta = (ctx: Ctx) => ({ requestId: ctx.requestId, actor: 'operator' });

const percent = {
  type: 'string', pattern: '^(100(\\.0{1,4})?|[0-9]{1,2}(\\.[0-9]{1,4})?)$',
  description: 'Percent as a decimal string from "0" to "100" (at most 4 decimals), "1.5" is 1.5 %',
};
const fixed = { type: 'string', pattern: '^[0-9]{1,9}(\\.0+)?$', description: 'Fixed fee in whole francs' };
const priceRule = { type: 'object', additionalProperties: false, required: ['percent', 'fixed'], properties: { percent, fixed } };
const codes = (items: unknown) => ({ type: 'array', maxItems: 100, items });

const schemas = {
  Merchant: {
    type: 'object',
    description: 'The create answer carries id, name, status and created_at; reads add routing, pricing, webhook_url and updated_at.',
    required: ['id', 'name', 'status', 'created_at'],
    properties: {
      id: ref('Uuid'), name: { type: 'string' }, status: { type: 'string', enum: ['active', 'inactive'] },
      routing: ref('Routing'), pricing: ref('Pricing'), webhook_url: { type: ['string', 'null'] },
      created_at: ref('DateTime'), updated_at: ref('DateTime'),
    },
  },
  Routing: {
    type: 'object',
    required: ['payin_operators', 'payout_operators', 'corridors', 'kyc_required_operators'],
    properties: {
      payin_operators: codes({ type: 'string', enum: OPERATOR_CODES }),
      payout_operators: codes({ type: 'string', enum: OPERATOR_CODES }),
      corridors: codes({ type: 'string', pattern: CORRIDOR_PATTERN }),
      kyc_required_operators: codes({ type: 'string', enum: OPERATOR_CODES }),
    },
  },
  Pricing: { type: 'object', required: ['payin', 'payout', 'transfer'], properties: { payin: priceRule, payout: priceRule, transfer: priceRule } },
  WebhookSecret: {
    type: 'object',
    required: ['url', 'signing_secret'],
    properties: { url: { type: 'string' }, signing_secret: { type: 'string', description: 'Shown once: verifies the X-Service-Signature of each delivery' } },
  },
  ApiKeyScopes: {
    type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', enum: ['*', ...ALL_SCOPES] },
    description: 'What the key may do (CONTRACT §18): ["*"] (everything, the default) or <resource>:read and <resource>:write ' +
      '(write includes read). A call outside them is refused 403 forbidden, naming the missing scope. Answered normalised: ' +
      'duplicates removed, a read beside its write dropped.',
  },
  ApiKey: {
    type: 'object',
    required: ['id', 'api_key', 'status', 'created_at', 'expires_at', 'scopes'],
    properties: {
      id: ref('Uuid'), api_key: { type: 'string' }, status: { type: 'string', enum: ['active', 'revoked', 'expired'] },
      created_at: ref('DateTime'), expires_at: { type: ['string', 'null'], format: 'date-time' }, scopes: ref('ApiKeyScopes'),
    },
  },
  ApiKeyWithSecret: {
    type: 'object',
    description: 'A created key answers every field; a rotation answers id, api_key and api_secret.',
    required: ['id', 'api_key', 'api_secret'],
    properties: {
      id: ref('Uuid'), api_key: { type: 'string' }, api_secret: { type: 'string', description: 'Shown once' },
      status: { type: 'string' }, created_at: ref('DateTime'), expires_at: { type: ['string', 'null'] }, scopes: ref('ApiKeyScopes'),
    },
  },
};

interface MerchantRow {
  id: string; name: string; status: string; routing: unknown; pricing: unknown; webhook_url: string | null;
  created_at: Date; updated_at: Date;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

async function readMerchant(ctx: Ctx, id: string) {
  const row = (await ctx.services.knex('merchants').where({ id }).first()) as MerchantRow | undefined;
  if (!row) throw new DomainError('not_found', 'Merchant not found');
  return {
    id: row.id, name: row.name, status: row.status, routing: row.routing, pricing: row.pricing,
    webhook_url: row.webhook_url, created_at: iso(row.created_at), updated_at: iso(row.updated_at),
  };
}

export function keyView(k: { keyId: string; apiKey: string; status: string; createdAt: string; expiresAt: string | null; scopes: KeyScope[] }, now: Date) {
  const expired = k.expiresAt !== null && Date.parse(k.expiresAt) <= now.getTime();
  return {
    id: k.keyId, api_key: k.apiKey, status: k.status === 'active' && expired ? 'expired' : k.status, created_at: k.createdAt, expires_at: k.expiresAt,
    scopes: k.scopes,
  };
}

async function existing(ctx: Ctx): Promise<M.MerchantState> {
  const loaded = await ctx.services.aggregates.load(`merchant-${ctx.params.merchant_id}`, M.merchantDecider);
  if (!loaded.state.exists) throw new DomainError('not_found', 'Merchant not found');
  return loaded.state;
}

export const adminMerchants: ApiModule = {
  schemas,
  paths: {
    '/admin/merchants': {
      post: {
        ...admin, operationId: 'adminCreateMerchant', 'x-audit': { action: 'merchant.created', target: { type: 'merchant', id: 'answer:id' }, merchant: 'answer:id' }, summary: 'Create a merchant',
        description:
          'A new active merchant with the default routing (every operator for ' +
          'payins and payouts, no corridor) and pricing. Create an API key next.',
        requestBody: body({ type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 } } }),
        responses: { 201: json(ref('Merchant'), 'Created'), 400: errors[400], 401: errors[401] },
      },
    },
    '/admin/merchants/{merchant_id}': {
      get: {
        ...admin, operationId: 'adminGetMerchant', summary: 'Read a merchant with routing, pricing and webhook URL',
        description: 'The merchant with its status, routing, pricing and webhook URL (never the signing secret).',
        parameters: [mid], responses: { 200: json(ref('Merchant')), 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/status': {
      post: {
        ...admin, operationId: 'adminSetMerchantStatus', 'x-audit': { action: 'merchant.status_set', target: { type: 'merchant', id: 'path:merchant_id' }, merchant: 'path:merchant_id' }, summary: 'Activate or deactivate a merchant',
        description: 'An inactive merchant\'s API keys are refused (401) until it is active again; nothing else changes.',
        parameters: [mid],
        requestBody: body({ type: 'object', additionalProperties: false, required: ['status'], properties: { status: { type: 'string', enum: ['active', 'inactive'] } } }),
        responses: { 200: json(ref('Merchant')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/api-keys': {
      post: {
        ...admin, operationId: 'adminCreateApiKey', 'x-audit': { action: 'api_key.created', target: { type: 'api_key', id: 'answer:id' }, merchant: 'path:merchant_id' }, summary: 'Create an API key (the secret is shown once)',
        description:
          'api_key goes in X-Api-Key and api_secret in X-Api-Secret. The secret ' +
          'is answered here only: it is stored as a hash. expires_at is optional. scopes restricts the key, e.g. ' +
          '["payins:write", "wallets:read"]; default ["*"] (everything). "*" stands alone; an unknown scope is a 400 naming it.',
        parameters: [mid],
        requestBody: body({
          type: 'object', additionalProperties: false,
          properties: { expires_at: { type: 'string', format: 'date-time' }, scopes: ref('ApiKeyScopes') },
        }),
        responses: { 201: json(ref('ApiKeyWithSecret'), 'Created'), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
      get: {
        ...admin, operationId: 'adminListApiKeys', summary: 'List API keys (never the secrets)',
        description: 'Every key of the merchant with its status (active, revoked, expired), oldest first; never a secret.',
        parameters: [mid],
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('ApiKey') } } }), 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/api-keys/{key_id}/rotate': {
      post: {
        ...admin, operationId: 'adminRotateApiKey', 'x-audit': { action: 'api_key.rotated', target: { type: 'api_key', id: 'path:key_id' }, merchant: 'path:merchant_id' }, summary: 'New secret for a key; the old one works for grace_seconds',
        description: 'The key gets a new secret (answered once); the previous secret keeps working for grace_seconds (default 0: at once refused).',
        parameters: [mid, kid],
        requestBody: body({ type: 'object', additionalProperties: false, properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: 604800 } } }),
        responses: { 201: json(ref('ApiKeyWithSecret'), 'Rotated'), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/api-keys/{key_id}/revoke': {
      post: {
        ...admin, operationId: 'adminRevokeApiKey', 'x-audit': { action: 'api_key.revoked', target: { type: 'api_key', id: 'path:key_id' }, merchant: 'path:merchant_id' }, summary: 'Revoke a key',
        description: 'The key is refused from now on (401); revoking is final.',
        parameters: [mid, kid], responses: { 200: json(ref('ApiKey')), 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/webhook': {
      put: {
        ...admin, operationId: 'adminSetWebhook', 'x-audit': { action: 'webhook.url_set', target: { type: 'merchant', id: 'path:merchant_id' }, merchant: 'path:merchant_id' }, summary: 'Set the webhook URL; answers a new signing secret each call',
        description:
          'Sets the URL events are POSTed to and answers a new signing secret (shown once) each ' +
          'call. The URL must be https and resolve to public addresses unless ALLOW_PRIVATE_URLS.',
        parameters: [mid],
        requestBody: body({ type: 'object', additionalProperties: false, required: ['url'], properties: { url: { type: 'string', minLength: 1, maxLength: 2000 } } }),
        responses: { 200: json(ref('WebhookSecret')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/routing': {
      put: {
        ...admin, operationId: 'adminSetRouting', 'x-audit': { action: 'merchant.routing_set', target: { type: 'merchant', id: 'path:merchant_id' }, merchant: 'path:merchant_id' }, summary: 'Set enabled operators and corridors',
        description:
          'Replaces the lists sent (payin_operators, payout_operators, corridors, ' +
          'kyc_required_operators); the lists left out keep their value. Answers the whole routing.',
        parameters: [mid],
        // A partial body: the lists not sent keep their value (so the answer's required list is not the body's).
        requestBody: body({ type: 'object', additionalProperties: false, properties: schemas.Routing.properties }),
        responses: { 200: json(ref('Routing')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/corridors/{corridor_code}': {
      put: {
        ...admin, operationId: 'adminAddCorridor', 'x-audit': { action: 'merchant.corridor_added', target: { type: 'corridor', id: 'path:corridor_code' }, merchant: 'path:merchant_id' }, summary: 'Enable one transfer corridor, keeping the others',
        description: 'Idempotent: enabling a corridor already enabled changes nothing and answers the same routing.',
        parameters: [mid, corridorParam],
        responses: { 200: json(ref('Routing')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
      delete: {
        ...admin, operationId: 'adminRemoveCorridor', 'x-audit': { action: 'merchant.corridor_removed', target: { type: 'corridor', id: 'path:corridor_code' }, merchant: 'path:merchant_id' }, summary: 'Disable one transfer corridor, keeping the others',
        description: 'Idempotent: disabling a corridor that is not enabled changes nothing and answers the same routing. ' +
          'Transfers already created on it go on; new transfer quotes on it are refused (corridor_not_configured).',
        parameters: [mid, corridorParam],
        responses: { 200: json(ref('Routing')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/pricing': {
      put: {
        ...admin, operationId: 'adminSetPricing', 'x-audit': { action: 'merchant.pricing_set', target: { type: 'merchant', id: 'path:merchant_id' }, merchant: 'path:merchant_id' }, summary: 'Set pricing per flow',
        description:
          'Replaces the price rules sent (payin, payout, transfer: percent and ' +
          'fixed); the flows left out keep theirs. Applies to quotes made from now on.',
        parameters: [mid],
        requestBody: body({ type: 'object', additionalProperties: false, properties: schemas.Pricing.properties }),
        responses: { 200: json(ref('Pricing')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
  },
  handlers: {
    adminCreateMerchant: async (ctx) => {
      const id = (await C.createMerchant(ctx.services, ctx.body.name, meta(ctx))).id;
      const m = await readMerchant(ctx, id);
      return { status: 201, body: { id: m.id, name: m.name, status: m.status, created_at: m.created_at } };
    },
    adminGetMerchant: async (ctx) => ({ status: 200, body: await readMerchant(ctx, ctx.params.merchant_id!) }),
    adminSetMerchantStatus: async (ctx) => {
      await C.setMerchantStatus(ctx.services, ctx.params.merchant_id!, ctx.body.status, meta(ctx));
      return { status: 200, body: await readMerchant(ctx, ctx.params.merchant_id!) };
    },
    adminCreateApiKey: async (ctx) => {
      const expiresAt = ctx.body.expires_at ? new Date(ctx.body.expires_at).toISOString() : null;
      const { key, apiSecret } = await C.createApiKey(ctx.services, ctx.params.merchant_id!, expiresAt, ctx.body.scopes ?? EVERYTHING, meta(ctx));
      return { status: 201, body: { ...keyView(key, ctx.services.clock.now()), api_secret: apiSecret } };
    },
    adminListApiKeys: async (ctx) => {
      const state = await existing(ctx);
      const now = ctx.services.clock.now();
      const data = Object.values(state.keys).sort((a, b) => a.createdAt.localeCompare(b.createdAt)).map((k) => keyView(k, now));
      return { status: 200, body: { data } };
    },
    adminRotateApiKey: async (ctx) => {
      const { key, apiSecret } = await C.rotateApiKey(ctx.services, ctx.params.merchant_id!, ctx.params.key_id!, ctx.body.grace_seconds ?? 0, meta(ctx));
      return { status: 201, body: { id: key.keyId, api_key: key.apiKey, api_secret: apiSecret } };
    },
    adminRevokeApiKey: async (ctx) => {
      const state = await C.revokeApiKey(ctx.services, ctx.params.merchant_id!, ctx.params.key_id!, meta(ctx));
      return { status: 200, body: keyView(state.keys[ctx.params.key_id!]!, ctx.services.clock.now()) };
    },
    adminSetWebhook: async (ctx) => {
      await existing(ctx);
      const policy = { allowPrivate: ctx.services.config.allowPrivateUrls, schemes: ['https:' as const], resolver: ctx.services.resolver };
      try {
        await checkUrl(ctx.body.url, policy);
      } catch (err) {
        if (err instanceof UnsafeUrlError) throw new DomainError('bad_request', `Webhook URL refused: ${err.message}`, [{ field: 'url', message: err.message }]);
        throw err;
      }
      // The merchant's first webhook endpoint (CONTRACT.md §11), created for every event when it has none.
      const r = await configureFirstEndpoint(ctx.services, ctx.params.merchant_id!, ctx.body.url, meta(ctx));
      return { status: 200, body: { url: r.url, signing_secret: r.signingSecret } };
    },
    adminSetRouting: async (ctx) => {
      const s = await C.setRouting(ctx.services, ctx.params.merchant_id!, ctx.body, meta(ctx));
      return { status: 200, body: s.routing };
    },
    adminAddCorridor: async (ctx) => {
      const s = await C.addCorridor(ctx.services, ctx.params.merchant_id!, ctx.params.corridor_code!, meta(ctx));
      return { status: 200, body: s.routing };
    },
    adminRemoveCorridor: async (ctx) => {
      const s = await C.removeCorridor(ctx.services, ctx.params.merchant_id!, ctx.params.corridor_code!, meta(ctx));
      return { status: 200, body: s.routing };
    },
    adminSetPricing: async (ctx) => {
      const s = await C.setPricing(ctx.services, ctx.params.merchant_id!, ctx.body, meta(ctx));
      return { status: 200, body: s.pricing };
    },
  },
};
