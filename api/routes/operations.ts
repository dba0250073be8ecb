// Operator API for finance and operations (issue 10): any stream's event history, the audit,
// wallet statements, projection status and online rebuilds (the Prometheus metrics: metrics.ts).
// Everything here takes the operator token (Bearer ADMIN_TOKEN).
import type { ApiModule, Ctx } from '../module.ts';
import { errors, idParam, json, ref } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { readHistory, historyParams } from './history.ts';
import { runAudit } from '../../projections/finance-audit.ts';
import { answerStatement, statementParams, statementResponse } from './statements.ts';
import { projectionStatus } from '../../projections/rebuild.ts';
import { rebuildRuns, startRebuild } from '../../projections/rebuilds.ts';

const tags = ['Operations'];
const admin = { 'x-auth': 'admin' as const, tags };

const text = (contentType: string, description: string) => ({
  description, content: { [contentType]: { schema: { type: 'string' } } },
});

const schemas = {
  AuditReport: {
    type: 'object',
    description: 'ok is false when any check found a discrepancy; see the CLI (`npm run audit`) for the same report as text.',
    required: ['ok', 'discrepancies', 'started_at', 'finished_at', 'elapsed_ms', 'ledger', 'read_models', 'snapshots'],
    properties: {
      ok: { type: 'boolean' },
      discrepancies: { type: 'integer' },
      started_at: ref('DateTime'),
      finished_at: ref('DateTime'),
      elapsed_ms: { type: 'integer' },
      ledger: { type: 'object' },
      read_models: { type: 'array', items: { type: 'object' } },
      snapshots: {
        type: 'object',
        description: 'Each aggregate snapshot compared with the fold of its stream up to its version (snapshots are derived data, never trusted over the events).',
        required: ['ok', 'checked', 'other_shape', 'mismatched', 'findings'],
        properties: {
          ok: { type: 'boolean' },
          checked: { type: 'integer', description: 'Snapshots compared with their stream' },
          other_shape: { type: 'integer', description: 'Snapshots of a state shape their decider no longer has: never loaded, not compared' },
          mismatched: { type: 'integer', description: 'Snapshots that are not the fold of their stream (counted in discrepancies)' },
          findings: { type: 'array', items: { type: 'object' } },
        },
      },
    },
  },
  Statement: {
    type: 'object',
    required: ['merchant_id', 'currency', 'from', 'to', 'opening', 'closing', 'totals', 'reconciled', 'settled', 'lines'],
    properties: {
      merchant_id: ref('Uuid'), currency: ref('Currency'), from: ref('DateTime'), to: ref('DateTime'),
      opening: { type: 'object', required: ['available', 'reserved'], properties: { available: { type: 'string' }, reserved: { type: 'string' } } },
      closing: { type: 'object', required: ['available', 'reserved'], properties: { available: { type: 'string' }, reserved: { type: 'string' } } },
      totals: { type: 'object' },
      reconciled: { type: 'boolean', description: 'opening + the sum of the movements = closing = the balances as of `to`' },
      settled: { type: 'boolean', description: 'The period ended more than a minute before the statement was asked: it no longer changes (docs/MONEY.md)' },
      lines: { type: 'array', items: { type: 'object' } },
    },
  },
  ProjectionStatus: {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['projection', 'checkpoint', 'head', 'lag_events', 'rebuild'],
          properties: {
            projection: { type: 'string' }, checkpoint: { type: 'string' }, head: { type: 'string' },
            lag_events: { type: 'integer' }, rebuild: { type: ['object', 'null'] },
          },
        },
      },
    },
  },
};

/** One audit at a time per process: a second request waits for the first, then runs its own. */
let auditQueue: Promise<unknown> = Promise.resolve();

export const operationsModule: ApiModule = {
  schemas,
  paths: {
    '/admin/streams/{stream}': {
      get: {
        ...admin, operationId: 'adminReadStream', summary: 'Every event of any stream, oldest first',
        description: 'Stream names: merchant-<id>, customer-<id>, quote-<id>, payin-<id>, payout-<id>, transfer-<id>, wallet-<merchant id>-<currency>.',
        parameters: [
          { name: 'stream', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z][a-z0-9_]*-[A-Za-z0-9:_-]{1,200}$' } },
          ...historyParams,
        ],
        responses: { 200: json(ref('EventHistory')), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/audit': {
      post: {
        ...admin, operationId: 'adminRunAudit', 'x-audit': 'not-a-change', summary: 'Replay every event: verify the ledger and compare every read model with a fresh fold',
        description: 'Runs in the request (use `npm run audit` for very large histories). Read-only: never blocks the API or the projector.',
        responses: { 200: json(ref('AuditReport')), 401: errors[401] },
      },
    },
    '/admin/merchants/{merchant_id}/statements': {
      get: {
        ...admin, operationId: 'adminWalletStatement', summary: 'A wallet statement: every movement in a period, opening and closing balances',
        description: 'Period [from, to) by movement time; from defaults to the beginning, to to now. format=csv answers text/csv.',
        parameters: [idParam('merchant_id'), ...statementParams],
        responses: { 200: statementResponse, 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/projections': {
      get: {
        ...admin, operationId: 'adminProjectionStatus', summary: 'Each projection\'s checkpoint, lag in events, and its latest online rebuild',
        description:
          'For each read model: the position it has applied (checkpoint), ' +
          'the store\'s head, the lag in events, and its latest online rebuild.',
        responses: { 200: json(ref('ProjectionStatus')), 401: errors[401] },
      },
    },
    '/admin/projections/{projection}/rebuild': {
      post: {
        ...admin, operationId: 'adminRebuildProjection', 'x-audit': { action: 'projection.rebuild_started', target: { type: 'projection', id: 'path:projection' }, merchant: null }, summary: 'Start an online rebuild of one projection (202; follow it in GET /admin/projections)',
        description: 'The API keeps answering from the current tables until the rebuilt ones have caught up and are swapped in.',
        parameters: [{ name: 'projection', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,62}$' } }],
        responses: { 202: json({ type: 'object' }, 'Started (or already running)'), 401: errors[401], 404: errors[404] },
      },
    },
  },
  handlers: {
    adminReadStream: async (ctx) => {
      const h = await readHistory(ctx, ctx.params.stream!);
      if (!h) throw new DomainError('not_found', 'Stream not found');
      return { status: 200, body: h.body };
    },
    adminRunAudit: async (ctx) => {
      const s = ctx.services;
      const run = auditQueue.then(() => runAudit(s.knex, s.store, s.projector.projections));
      auditQueue = run.catch(() => undefined);
      const report = await run;
      ctx.log.info({ ok: report.ok, discrepancies: report.discrepancies, elapsed_ms: report.elapsed_ms }, 'audit');
      return { status: 200, body: report };
    },
    adminWalletStatement: async (ctx) => {
      const merchantId = ctx.params.merchant_id!;
      if (!(await ctx.services.knex('merchants').where({ id: merchantId }).first('id'))) throw new DomainError('not_found', 'Merchant not found');
      return answerStatement(ctx, merchantId);
    },
    adminProjectionStatus: async (ctx) => {
      const s = ctx.services;
      const runs = rebuildRuns(s);
      const rows = await projectionStatus(s.knex, s.store, s.projector.projections);
      return {
        status: 200,
        body: {
          data: rows.map((r) => ({
            projection: r.projection, checkpoint: r.checkpoint.toString(), head: r.head.toString(), lag_events: r.lag,
            rebuild: runs.find((x) => x.projection === r.projection) ?? null,
          })),
        },
      };
    },
    adminRebuildProjection: async (ctx) => {
      const p = ctx.services.projector.projections.find((x) => x.name === ctx.params.projection);
      if (!p) throw new DomainError('not_found', 'No such projection');
      const { run } = startRebuild(ctx.services, p);
      return { status: 202, body: run };
    },
  },
};
