// Operator callbacks (public): verified by the provider's adapter, then the same completion path as
// the gateway's status checks. A replayed callback has no second effect.
import type { ApiModule } from '../module.ts';
import { errors, json } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { CallbackRejected } from '../../infra/providers/types.ts';
import { settleLegFromCallback } from '../../commands/leg-outcomes.ts';
import { providers } from '../../infra/providers/index.ts';

export const providerCallbacksModule: ApiModule = {
  paths: {
    '/provider-callbacks/{provider}': {
      post: {
        'x-auth': 'public', tags: ['Providers'], operationId: 'providerCallback',
        description:
          'A provider\'s push of a leg outcome, verified by its adapter ' +
          '(sandbox: the X-Sandbox-Signature HMAC). A replayed callback changes nothing.',
        summary: 'Leg outcome pushed by a provider (signature verified by its adapter)',
        parameters: [{ name: 'provider', in: 'path', required: true, schema: { type: 'string', enum: ['sandbox'] } }],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
        responses: {
          200: json({ type: 'object', required: ['received'], properties: { received: { type: 'boolean' } } }),
          400: errors[400], 401: errors[401], 404: errors[404],
        },
      },
    },
  },
  handlers: {
    providerCallback: async (ctx) => {
      const name = ctx.params.provider!;
      if (!providers(ctx.services).byName.has(name)) throw new DomainError('not_found', 'Unknown provider');
      try {
        const known = await settleLegFromCallback(ctx.services, name, ctx.body, ctx.headers, { requestId: ctx.requestId, actor: `provider:${name}` });
        if (!known) throw new DomainError('not_found', 'Unknown leg reference');
      } catch (err) {
        if (err instanceof CallbackRejected) throw new DomainError('unauthorized', 'Callback signature not valid');
        throw err;
      }
      return { status: 200, body: { received: true } };
    },
  },
};
