// Operator API (CONTRACT §18): the audit log, every change made through the operator API or the
// dashboard (api/middleware/audit.ts, dashboard/audit.ts), newest first, filtered, as a §8 list or
// as CSV. Reading it records nothing.
import type { ApiModule, Ctx } from '../module.ts';
import { errors, json, listOf, ref } from '../openapi/common.ts';
import { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES } from '../../domain/audit-log.ts';
import { auditExport, auditPage, CSV_MAX_ROWS, type AuditFilter } from '../../projections/audit-log-read.ts';
import { auditCsv } from '../../projections/audit-log-csv.ts';

const dateOrDateTime = { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'string', format: 'date' }] };
const idText = { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,100}$' };

const schemas = {
  AuditEntry: {
    type: 'object',
    description: 'One change: who made it, what it was and on what, when, from which address, under which request. Ids only, never a secret.',
    required: ['id', 'at', 'merchant_id', 'actor', 'action', 'target', 'request_id', 'ip'],
    properties: {
      id: ref('Uuid'), at: ref('DateTime'),
      merchant_id: { type: ['string', 'null'], format: 'uuid', description: 'The merchant the change concerns; null for an operator-wide change (an operator\'s availability or routing, a projection rebuild)' },
      actor: {
        type: 'object', required: ['type', 'id'],
        properties: {
          type: { type: 'string', enum: [...AUDIT_ACTOR_TYPES] },
          id: { type: 'string', description: 'operator: the first 12 hex digits of the SHA-256 of the operator token used (never the token); member: the dashboard user\'s id', examples: ['4f2a9c81d07e'] },
        },
      },
      action: { type: 'string', enum: [...AUDIT_ACTIONS] },
      target: {
        type: 'object', required: ['type', 'id'],
        properties: { type: { type: 'string', examples: ['api_key'] }, id: { type: 'string' } },
      },
      request_id: { type: 'string', description: 'The X-Request-Id of the call that made the change' },
      ip: { type: 'string', description: 'The address the call came from, as the service saw it' },
    },
  },
};

const parameters = [
  { name: 'merchant_id', in: 'query', schema: ref('Uuid'), description: 'Only the changes concerning this merchant' },
  {
    name: 'actor', in: 'query', schema: { ...idText, examples: ['member:0d9c7a52-1f4e-4c1b-9a55-3f1c2d4b5e6f'] },
    description: 'Only this actor\'s changes: `operator:<fingerprint>`, `member:<user id>`, or the id alone; `operator` or `member` for every actor of that kind',
  },
  { name: 'action', in: 'query', schema: { type: 'string', enum: [...AUDIT_ACTIONS] }, description: 'Only this action' },
  { name: 'from', in: 'query', schema: dateOrDateTime, description: 'Changes at or after this instant (inclusive); a date (YYYY-MM-DD) means the start of that day, UTC' },
  { name: 'to', in: 'query', schema: dateOrDateTime, description: 'Changes at or before this instant (inclusive); a date includes that whole day, UTC' },
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { name: 'cursor', in: 'query', schema: { type: 'string', maxLength: 200 } },
  { name: 'format', in: 'query', schema: { type: 'string', enum: ['json', 'csv'], default: 'json' } },
];

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

const filterOf = (q: Record<string, unknown>): AuditFilter => ({
  merchantId: text(q.merchant_id), actor: text(q.actor), action: text(q.action), from: text(q.from), to: text(q.to),
});

async function answerCsv(ctx: Ctx) {
  const { data, next_cursor } = await auditExport(ctx.services.knex, filterOf(ctx.query), text(ctx.query.cursor));
  const headers: Record<string, string> = { 'Content-Disposition': 'attachment; filename="audit-log.csv"' };
  if (next_cursor !== null) headers['X-Next-Cursor'] = next_cursor;
  return { status: 200, text: auditCsv(data), contentType: 'text/csv; charset=utf-8', headers };
}

export const adminAuditLog: ApiModule = {
  schemas,
  paths: {
    '/admin/audit-log': {
      get: {
        'x-auth': 'admin', tags: ['Operations'], operationId: 'adminListAuditLog',
        summary: 'Every change made through the operator API or the dashboard, newest first',
        description:
          'One entry per successful change (a refused or failed call records nothing; reads record nothing), with its actor, action, target, ' +
          'time, request id and address. A list as every list (limit, cursor). format=csv answers the filtered entries as an RFC 4180 ' +
          `attachment, newest first, at most ${CSV_MAX_ROWS.toLocaleString('en')} rows; when more are left the X-Next-Cursor header names ` +
          'where the next export starts (pass it as cursor). Cells a spreadsheet would take for a formula are prefixed with \'.',
        parameters,
        responses: {
          200: {
            description: 'The entries',
            content: { 'application/json': { schema: listOf(ref('AuditEntry')) }, 'text/csv': { schema: { type: 'string' } } },
          },
          400: errors[400], 401: errors[401],
        },
      },
    },
  },
  handlers: {
    adminListAuditLog: async (ctx) => {
      if (ctx.query.format === 'csv') return answerCsv(ctx);
      const page = await auditPage(ctx.services.knex, filterOf(ctx.query), { limit: ctx.query.limit, cursor: text(ctx.query.cursor) });
      return { status: 200, body: page };
    },
  },
};
