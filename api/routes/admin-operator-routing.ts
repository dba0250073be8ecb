// Operator API (CONTRACT §15): which providers carry an operator's legs, in order, set and read on
// the operator's stream (`operator-<code>`, beside its availability) with who set it and when.
import type { ApiModule } from '../module.ts';
import { body, errors, json, ref } from '../openapi/common.ts';
import * as C from '../../commands/operator-availability.ts';
import { PROVIDER_NAMES } from '../../domain/operator-routing.ts';
import { admin, changedByOf, codeParam } from './admin-operators.ts';


const schemas = {
  OperatorRouting: {
    type: 'object',
    description: 'The providers that carry the operator\'s new legs, in order: a leg starts at the first and moves to the next only when that one certainly did not take it.',
    required: ['operator_code', 'providers'],
    properties: {
      operator_code: { type: 'string' },
      providers: { type: 'array', minItems: 1, maxItems: 3, items: { type: 'string', enum: [...PROVIDER_NAMES] }, examples: [['mtn_momo', 'pawapay']] },
    },
  },
};

export const adminOperatorRouting: ApiModule = {
  schemas,
  paths: {
    '/admin/operators/{operator_code}/routing': {
      get: {
        ...admin, operationId: 'adminGetOperatorRouting', summary: 'The providers that carry an operator\'s legs',
        description: 'In order; `["sandbox"]` while never set.',
        parameters: [codeParam], responses: { 200: json(ref('OperatorRouting')), 401: errors[401], 404: errors[404] },
      },
      put: {
        ...admin, operationId: 'adminSetOperatorRouting', 'x-audit': { action: 'operator.routing_set', target: { type: 'operator', id: 'path:operator_code' }, merchant: null }, summary: 'Set the providers that carry an operator\'s legs',
        description:
          'An ordered list of 1 to 3 providers (`sandbox`, `mtn_momo`, `pawapay`), no repeats (else 400 bad_request). Each must ' +
          'be configured in this service and serve the operator (else 400 provider_unavailable). New legs start at the first; ' +
          'a leg already started stays with the provider that took it. A routing already in force records nothing.',
        parameters: [codeParam],
        requestBody: body({ type: 'object', additionalProperties: false, required: ['providers'], properties: { providers: { type: 'array', items: { type: 'string' } } } }),
        responses: { 200: json(ref('OperatorRouting')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
  },
  handlers: {
    adminGetOperatorRouting: async (ctx) => {
      const code = ctx.params.operator_code!;
      return { status: 200, body: { operator_code: code, providers: (await C.operatorAvailability(ctx.services, code)).routing } };
    },
    adminSetOperatorRouting: async (ctx) => {
      const code = ctx.params.operator_code!;
      const state = await C.setOperatorRouting(ctx.services, { operatorCode: code, providers: ctx.body.providers, changedBy: changedByOf(ctx) },
        { requestId: ctx.requestId, actor: 'operator' });
      return { status: 200, body: { operator_code: code, providers: state.routing } };
    },
  },
};
