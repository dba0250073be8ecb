// Operator API (CONTRACT §15, issue 41 point 6): reconciliation of the provider legs of a period with
// what each provider says of them (commands/reconciliation.ts). `npm run reconcile` answers the same
// report as a table or CSV, for periods longer than one request should take.
import type { ApiModule, Ctx } from '../module.ts';
import { errors, ref } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { PROVIDER_NAMES } from '../../domain/operator-routing.ts';
import { providers } from '../../infra/providers/index.ts';
import { FINDINGS, PeriodTooLarge, reconcile, type ReconciliationReport } from '../../commands/reconciliation.ts';

const admin = { 'x-auth': 'admin' as const, tags: ['Operations'] };
const DAY_MS = 24 * 3600 * 1000;
/** One request checks at most this many legs (a status query each); the CLI takes up to 100,000. */
const API_MAX_LEGS = 10_000;
const legState = { type: 'string', enum: ['pending', 'completed', 'failed'] };

const example: ReconciliationReport = {
  provider: 'mtn_momo', from: '2026-11-25T00:00:00.000Z', to: '2026-11-26T00:00:00.000Z', pending_alert_seconds: 3600,
  checked: 1024, agreeing: 1022, counts: { disagrees: 1, not_seen: 0, pending_too_long: 1, unreachable: 0 },
  findings: [
    {
      reference: 'c38045e5-c418-4203-8bf1-e1e0e87e059d', owner: 'payin', kind: 'collection', provider: 'mtn_momo',
      provider_reference: 'c38045e5-c418-4203-8bf1-e1e0e87e059d', ours: 'completed', theirs: 'failed', finding: 'disagrees',
      detail: 'INTERNAL_PROCESSING_ERROR', created_at: '2026-11-25T10:41:18.097Z',
    },
    {
      reference: 'transfer:1d424eb1-7c1e-4f7a-9d8b-2a6c5e4f3b21:payout:1', owner: 'transfer', kind: 'disbursement', provider: 'mtn_momo',
      provider_reference: '5b0e2f4c-8a7d-4c1e-9f36-0d2b7a9e8c15', ours: 'pending', theirs: 'pending', finding: 'pending_too_long',
      detail: null, created_at: '2026-11-25T14:02:51.530Z',
    },
  ],
};

const schemas = {
  ReconciliationFinding: {
    type: 'object',
    description: 'A leg whose provider does not say what we say, or could not be asked.',
    required: ['reference', 'owner', 'kind', 'provider', 'provider_reference', 'ours', 'theirs', 'finding', 'detail', 'created_at'],
    properties: {
      reference: { type: 'string', description: 'Our leg reference: the payin, payout or refund id, or `transfer:<id>:collection` / `transfer:<id>:payout:<attempt>`' },
      owner: { type: 'string', enum: ['payin', 'payout', 'refund', 'transfer'] },
      kind: { type: 'string', enum: ['collection', 'disbursement', 'refund'] },
      provider: { type: 'string', enum: [...PROVIDER_NAMES] },
      provider_reference: { type: ['string', 'null'], description: 'The provider\'s reference (null while it has given none)' },
      ours: { ...legState, description: 'The leg\'s outcome as the service recorded it' },
      theirs: { type: ['string', 'null'], enum: ['pending', 'completed', 'failed', null], description: 'The provider\'s status; null when it does not know the leg or could not be asked' },
      finding: {
        type: 'string', enum: [...FINDINGS],
        description: '`disagrees`: the outcomes differ (one final and the other not, or both final and different); `not_seen`: the provider does not know a leg we hold ' +
          'pending or completed; `pending_too_long`: pending on both sides past PROVIDER_PENDING_ALERT_SECONDS; `unreachable`: the status query failed',
      },
      detail: { type: ['string', 'null'], description: 'The provider\'s failure code when it says failed; the error when unreachable; else null' },
      created_at: { ...ref('DateTime'), description: 'When the leg was started' },
    },
  },
  ReconciliationReport: {
    type: 'object',
    description: 'Every leg started in [from, to) checked with its provider: the agreeing ones counted, the others listed.',
    required: ['provider', 'from', 'to', 'pending_alert_seconds', 'checked', 'agreeing', 'counts', 'findings'],
    properties: {
      provider: { type: ['string', 'null'], enum: [...PROVIDER_NAMES, null], description: 'null: every provider' },
      from: ref('DateTime'),
      to: ref('DateTime'),
      pending_alert_seconds: { type: 'integer', description: 'PROVIDER_PENDING_ALERT_SECONDS: the age past which a leg pending on both sides is listed' },
      checked: { type: 'integer', description: 'Legs checked' },
      agreeing: { type: 'integer', description: 'Legs on which we and the provider agree' },
      counts: {
        type: 'object', required: [...FINDINGS],
        properties: Object.fromEntries(FINDINGS.map((f) => [f, { type: 'integer' }])),
      },
      findings: { type: 'array', items: ref('ReconciliationFinding'), description: 'In leg order (created_at, then reference)' },
    },
  },
};

/** The period asked: [from, to), by default the 24 hours before now. */
function period(ctx: Ctx): { from: Date; to: Date } {
  const to = ctx.query.to ? new Date(String(ctx.query.to)) : ctx.services.clock.now();
  const from = ctx.query.from ? new Date(String(ctx.query.from)) : new Date(to.getTime() - DAY_MS);
  if (from.getTime() >= to.getTime()) {
    throw new DomainError('bad_request', 'from must be before to', [{ field: 'query.from', message: 'must be before to' }]);
  }
  return { from, to };
}

/** One reconciliation at a time per process: each is a status query per leg to the providers. */
let queue: Promise<unknown> = Promise.resolve();

export const adminReconciliation: ApiModule = {
  schemas,
  paths: {
    '/admin/reconciliation': {
      get: {
        ...admin, operationId: 'adminReconciliation', summary: 'Every provider leg of a period compared with the provider\'s status',
        description:
          'Asks each leg\'s provider for its status (a few at a time) and compares it with the outcome the service recorded: lists the legs whose ' +
          'outcomes disagree, the legs the provider never saw, the legs pending past PROVIDER_PENDING_ALERT_SECONDS and the legs whose provider ' +
          'could not be asked. Legs by their start time, [from, to); default the last 24 hours. Runs in the request, one at a time per process, ' +
          `at most ${API_MAX_LEGS.toLocaleString('en')} legs (400: ask for a shorter period, or use \`npm run reconcile\`).`,
        parameters: [
          { name: 'provider', in: 'query', schema: { type: 'string', enum: [...PROVIDER_NAMES] }, description: 'Only this provider\'s legs (default: every provider)' },
          { name: 'from', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'Legs started at or after it. Default: 24 hours before `to`.' },
          { name: 'to', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'Legs started before it. Default: now.' },
        ],
        responses: {
          200: { description: 'The report', content: { 'application/json': { schema: ref('ReconciliationReport'), example } } },
          400: errors[400], 401: errors[401],
        },
      },
    },
  },
  handlers: {
    adminReconciliation: async (ctx) => {
      const s = ctx.services;
      const { from, to } = period(ctx);
      const provider = ctx.query.provider === undefined ? undefined : String(ctx.query.provider);
      const adapters = providers(s).byName;
      if (provider !== undefined && !adapters.has(provider)) {
        throw new DomainError('provider_unavailable', `Provider ${provider} is not configured in this service`, [{ field: 'query.provider', message: 'not configured' }]);
      }
      const deps = { knex: s.knex, store: s.store, clock: s.clock, adapters, pendingAlertSeconds: s.config.providers.pendingAlertSeconds };
      const run = queue.then(() => reconcile(deps, { provider, from, to }, { maxLegs: API_MAX_LEGS }));
      queue = run.catch(() => undefined);
      let report: ReconciliationReport;
      try {
        report = await run;
      } catch (err) {
        if (err instanceof PeriodTooLarge) throw new DomainError('bad_request', err.message, [{ field: 'query.from', message: err.message }]);
        throw err;
      }
      ctx.log.info({ provider: report.provider, from: report.from, to: report.to, checked: report.checked, ...report.counts }, 'reconciliation');
      return { status: 200, body: report };
    },
  },
};
