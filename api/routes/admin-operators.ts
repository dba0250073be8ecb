// Operator API (CONTRACT.md §14): each operator's availability per flow, set and read, and its
// history of changes (who, when, from what to what: the events of its stream `operator-<code>`).
import { createHash } from 'node:crypto';
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, json, ref } from '../openapi/common.ts';
import * as C from '../../commands/operator-availability.ts';
import { operator, OPERATOR_CODES } from '../../domain/catalogue.ts';
import { AVAILABILITIES, AVAILABILITY_FLOWS, type ChangedBy, type OperatorAvailabilityState } from '../../domain/operator-availability.ts';

export const admin = { 'x-auth': 'admin' as const, tags: ['Operator'] };
// An unknown operator code names nothing: 404 (the validator's rule for a path value outside its schema).
export const codeParam = { name: 'operator_code', in: 'path', required: true, schema: { type: 'string', enum: OPERATOR_CODES }, description: 'An operator of GET /operators, e.g. CM_MTN_MOMO' };
const value = { type: 'string', enum: [...AVAILABILITIES] };

const changedBy = {
  type: 'object',
  description: 'Who made the change: the operator API\'s caller, named by a fingerprint of its credential (never the credential), and the request.',
  required: ['actor', 'credential', 'request_id'],
  properties: {
    actor: { type: 'string', enum: ['operator'] },
    credential: { type: 'string', description: '`admin-token:` and the first 12 hex digits of the SHA-256 of the ADMIN_TOKEN used', examples: ['admin-token:4f2a9c81d07e'] },
    request_id: { type: ['string', 'null'] },
  },
};

const schemas = {
  OperatorAvailability: {
    type: 'object',
    description: 'An operator\'s availability per flow (default `operational`), with its last change (null while never set).',
    required: ['operator_code', 'name', 'country_code', 'payin', 'payout', 'updated_at', 'updated_by'],
    properties: {
      operator_code: { type: 'string' }, name: { type: 'string' }, country_code: ref('CountryCode'),
      payin: value, payout: value, updated_at: { type: ['string', 'null'], format: 'date-time' }, updated_by: { oneOf: [{ type: 'null' }, changedBy] },
    },
  },
  OperatorAvailabilityChange: {
    type: 'object',
    description: 'One change: the flows that changed, each from and to, who changed them and when.',
    required: ['operator_code', 'version', 'changes', 'changed_by', 'at'],
    properties: {
      operator_code: { type: 'string' },
      version: { type: 'integer', description: 'The change\'s number on the operator\'s stream (1 the first)' },
      changes: {
        type: 'array', minItems: 1,
        items: { type: 'object', required: ['flow', 'from', 'to'], properties: { flow: { type: 'string', enum: [...AVAILABILITY_FLOWS] }, from: value, to: value } },
      },
      changed_by: changedBy, at: ref('DateTime'),
    },
  },
};

/** The operator API has one credential: it is named by a fingerprint, enough to tell two tokens apart, useless to forge one. */
export function changedByOf(ctx: Ctx): ChangedBy {
  const fingerprint = createHash('sha256').update(ctx.services.adminToken).digest('hex').slice(0, 12);
  return { actor: 'operator', credential: `admin-token:${fingerprint}`, request_id: ctx.requestId || null };
}

function view(code: string, s: OperatorAvailabilityState) {
  const o = operator(code)!;
  return { operator_code: code, name: o.name, country_code: o.country, payin: s.payin, payout: s.payout, updated_at: s.updatedAt, updated_by: s.updatedBy };
}

export const adminOperators: ApiModule = {
  schemas,
  paths: {
    '/admin/operators': {
      get: {
        ...admin, operationId: 'adminListOperators', summary: 'Every operator with its availability per flow',
        description: 'Every operator of the sandbox catalogue, in catalogue order, with its availability for payins and payouts and its last change.',
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('OperatorAvailability') } } }), 401: errors[401] },
      },
    },
    '/admin/operators/{operator_code}/availability': {
      get: {
        ...admin, operationId: 'adminGetOperatorAvailability', summary: 'An operator\'s availability per flow',
        description: 'As it is now: what the next quote or payment on this operator decides with.',
        parameters: [codeParam], responses: { 200: json(ref('OperatorAvailability')), 401: errors[401], 404: errors[404] },
      },
      put: {
        ...admin, operationId: 'adminSetOperatorAvailability', 'x-audit': { action: 'operator.availability_set', target: { type: 'operator', id: 'path:operator_code' }, merchant: null }, summary: 'Set an operator\'s availability for payins, payouts or both',
        description:
          '`closed`: new quotes and payments on this operator and flow are refused (400 operator_unavailable), nothing held, ' +
          'the quote not consumed (a transfer checks its payer\'s operator for payin and its recipient\'s for payout). Payments ' +
          'already created go on and settle. `delayed`: accepted, quotes say operator_availability `delayed`. The flows left ' +
          'out keep theirs; a value already in force records nothing. Every change is recorded with who made it and when ' +
          '(GET …/availability/history). Answers the operator\'s availability.',
        parameters: [codeParam],
        requestBody: body({ type: 'object', additionalProperties: false, minProperties: 1, properties: { payin: value, payout: value } }),
        responses: { 200: json(ref('OperatorAvailability')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/operators/{operator_code}/availability/history': {
      get: {
        ...admin, operationId: 'adminListOperatorAvailabilityChanges', summary: 'Every change of an operator\'s availability, oldest first',
        description: 'Who changed what, from what to what, and when: the events of the operator\'s availability, oldest first (empty while never set).',
        parameters: [codeParam],
        responses: {
          200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('OperatorAvailabilityChange') } } }), 401: errors[401], 404: errors[404],
        },
      },
    },
  },
  handlers: {
    adminListOperators: async (ctx) => ({ status: 200, body: { data: (await C.allOperatorAvailabilities(ctx.services)).map((o) => view(o.code, o.state)) } }),
    adminGetOperatorAvailability: async (ctx) => {
      const code = ctx.params.operator_code!;
      return { status: 200, body: view(code, await C.operatorAvailability(ctx.services, code)) };
    },
    adminSetOperatorAvailability: async (ctx) => {
      const code = ctx.params.operator_code!;
      const state = await C.setOperatorAvailability(ctx.services, {
        operatorCode: code, payin: ctx.body.payin, payout: ctx.body.payout, changedBy: changedByOf(ctx),
      }, { requestId: ctx.requestId, actor: 'operator' });
      return { status: 200, body: view(code, state) };
    },
    adminListOperatorAvailabilityChanges: async (ctx) => {
      const data = await C.availabilityHistory(ctx.services, ctx.params.operator_code!);
      return { status: 200, body: { data: data.map((d) => ({ operator_code: d.operator_code, version: d.version, changes: d.changes, changed_by: d.changed_by, at: d.at })) } };
    },
  },
};
