// Statements for merchants (CONTRACT.md §13): GET /statements, the operator's statement
// (GET /admin/merchants/{id}/statements, operations.ts) of the merchant's own wallet. Both answer
// through `answerStatement`: one period rule, one builder (projections/statements.ts), one CSV.
import type { ApiModule, Ctx, Reply } from '../module.ts';
import { errors, ref } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { buildStatement, statementCsv, StatementTooLong } from '../../projections/statements.ts';
import { requireEverythingCommitted } from '../middleware/read-your-writes.ts';

/** The statement's query parameters, the operator's and the merchant's. */
export const statementParams = [
  { name: 'currency', in: 'query', required: true, schema: ref('Currency') },
  { name: 'from', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'Start of the period (inclusive: movements at or after it). Default: the beginning.' },
  { name: 'to', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'End of the period (exclusive: movements before it). Default: now.' },
  { name: 'format', in: 'query', schema: { type: 'string', enum: ['json', 'csv'], default: 'json' } },
];

export const statementResponse = {
  description: 'The statement',
  content: { 'application/json': { schema: ref('Statement') }, 'text/csv': { schema: { type: 'string' } } },
};

/**
 * The statement of `merchantId`'s wallet in the asked currency over [from, to), as JSON or CSV. The
 * read models first catch up with every commit before the request, so a settled period is final.
 */
export async function answerStatement(ctx: Ctx, merchantId: string): Promise<Reply> {
  const { knex, clock } = ctx.services;
  const now = clock.now();
  const from = ctx.query.from ? new Date(String(ctx.query.from)) : new Date(0);
  const to = ctx.query.to ? new Date(String(ctx.query.to)) : now;
  if (from.getTime() >= to.getTime()) {
    throw new DomainError('bad_request', 'from must be before to', [{ field: 'query.from', message: 'must be before to' }]);
  }
  await requireEverythingCommitted(ctx.services);
  let st;
  try {
    st = await buildStatement(knex, { merchantId, currency: String(ctx.query.currency), from, to, now, readModelsAtHead: true });
  } catch (err) {
    if (err instanceof StatementTooLong) throw new DomainError('bad_request', err.message, [{ field: 'query.from', message: err.message }]);
    throw err;
  }
  if (ctx.query.format !== 'csv') return { status: 200, body: st };
  const name = `statement-${st.merchant_id}-${st.currency}-${st.from.slice(0, 10)}-${st.to.slice(0, 10)}.csv`;
  return { status: 200, text: statementCsv(st), contentType: 'text/csv; charset=utf-8', headers: { 'Content-Disposition': `attachment; filename="${name}"` } };
}

export const statementsModule: ApiModule = {
  paths: {
    '/statements': {
      get: {
        'x-auth': 'merchant', tags: ['Wallets'], 'x-scope': 'wallets:read', operationId: 'getStatement',
        summary: 'A statement of one of your wallets: opening balance, every movement in a period, closing balance',
        description: 'Period [from, to) by movement time: a movement at or after `from` and before `to` is in it. Opening = the balances as of `from` '
          + '(GET /wallets?as_of=from), closing = opening + the movements = the balances as of `to`: consecutive statements chain. '
          + '`settled` when no movement can fall into the period any more (the wallet moved after it, or it ended more than a minute before the ask): a settled statement never changes; 503 while the read models catch up. format=csv answers text/csv (an attachment). '
          + 'Only your own wallets; at most 50,000 movements per statement (400: ask for a shorter period).',
        parameters: statementParams,
        responses: { 200: statementResponse, 400: errors[400], 401: errors[401] },
      },
    },
  },
  handlers: {
    getStatement: (ctx) => answerStatement(ctx, ctx.merchantId),
  },
};
