// Operator callbacks (public, CONTRACT §15). The sandbox signs its own with our key: a verified one
// settles its leg (401 otherwise). A real provider's callback is only a hint: any well-formed one is
// answered 200 (a provider retries what is not 2xx), and the leg it names has its status asked at
// the provider before anything is recorded (commands/leg-callbacks.ts). MTN sends its callback to
// the X-Callback-Url of the leg (PUT or POST, the leg's X-Reference-Id in the path); pawaPay's URL is
// set once in its dashboard, for deposits, payouts and refunds alike.
import type { ApiModule, Ctx } from '../module.ts';
import { errors, json } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { CallbackRejected, type CallbackRequest } from '../../infra/providers/types.ts';
import { handleProviderCallback } from '../../commands/leg-callbacks.ts';
import { providers } from '../../infra/providers/index.ts';

const received = json({ type: 'object', required: ['received'], properties: { received: { type: 'boolean' } } });
const anyJson = { required: true, content: { 'application/json': { schema: {} } } };

function requestOf(ctx: Ctx, legId?: string): CallbackRequest {
  const raw = ctx.raw ?? { method: 'POST', path: '', authority: '', body: Buffer.from(JSON.stringify(ctx.body ?? null)) };
  return { method: raw.method, path: raw.path, authority: raw.authority, legId, headers: ctx.headers, rawBody: raw.body, body: ctx.body };
}

/** A real provider's hint: 200 for anything well-formed (its own leg or not), 400 otherwise, 404 while not configured. */
async function hint(ctx: Ctx, name: string, legId?: string) {
  if (!providers(ctx.services).byName.has(name)) throw new DomainError('not_found', 'This provider is not configured here');
  try {
    await handleProviderCallback(ctx.services, name, requestOf(ctx, legId), { requestId: ctx.requestId, actor: `provider:${name}` });
  } catch (err) {
    if (err instanceof CallbackRejected) throw new DomainError('bad_request', 'Not a callback of this provider');
    throw err;
  }
  return { status: 200, body: { received: true } };
}

const mtnCallback = (method: 'post' | 'put') => ({
  'x-auth': 'public' as const, tags: ['Providers'], operationId: method === 'post' ? 'mtnMomoCallback' : 'mtnMomoCallbackPut',
  summary: `MTN MoMo's callback for one leg (${method.toUpperCase()}): a hint, its status is asked at MTN`,
  description: 'Sent by MTN to the X-Callback-Url of a leg. Unsigned, so never trusted: the leg\'s status is asked at MTN before anything is recorded.',
  parameters: [{ name: 'reference', in: 'path', required: true, schema: { type: 'string', maxLength: 64 }, description: 'The leg\'s X-Reference-Id' }],
  requestBody: anyJson,
  responses: { 200: received, 400: errors[400], 404: errors[404] },
});

export const providerCallbacksModule: ApiModule = {
  paths: {
    '/provider-callbacks/{provider}': {
      post: {
        'x-auth': 'public', tags: ['Providers'], operationId: 'providerCallback',
        description:
          'The sandbox provider\'s push of a leg outcome, verified by its X-Sandbox-Signature HMAC. A replayed callback changes nothing.',
        summary: 'Leg outcome pushed by the sandbox provider (signature verified)',
        parameters: [{ name: 'provider', in: 'path', required: true, schema: { type: 'string', enum: ['sandbox'] } }],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { 200: received, 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/providers/mtn_momo/callbacks/{reference}': { post: mtnCallback('post'), put: mtnCallback('put') },
    '/providers/pawapay/callbacks': {
      post: {
        'x-auth': 'public', tags: ['Providers'], operationId: 'pawapayCallback',
        summary: 'pawaPay\'s callback for a deposit, payout or refund: a hint, its status is asked at pawaPay',
        description: 'A JSON object naming depositId, payoutId or refundId (else 400). RFC 9421 signatures, when present, are verified; one that fails is answered 200 and ignored.',
        requestBody: anyJson,
        responses: { 200: received, 400: errors[400], 404: errors[404] },
      },
    },
  },
  handlers: {
    providerCallback: async (ctx) => {
      const name = ctx.params.provider!;
      try {
        const result = await handleProviderCallback(ctx.services, name, requestOf(ctx), { requestId: ctx.requestId, actor: `provider:${name}` });
        if (result === 'unknown_leg') throw new DomainError('not_found', 'Unknown leg reference');
      } catch (err) {
        if (err instanceof CallbackRejected) throw new DomainError('unauthorized', 'Callback signature not valid');
        throw err;
      }
      return { status: 200, body: { received: true } };
    },
    mtnMomoCallback: (ctx) => hint(ctx, 'mtn_momo', ctx.params.reference),
    mtnMomoCallbackPut: (ctx) => hint(ctx, 'mtn_momo', ctx.params.reference),
    pawapayCallback: (ctx) => hint(ctx, 'pawapay'),
  },
};
