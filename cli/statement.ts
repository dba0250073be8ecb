// `npm run statement -- --merchant <id> --currency XOF [--from ISO] [--to ISO] [--format csv|json] [--out FILE]`:
// a wallet statement (projections/statements.ts), the same as GET /admin/merchants/{id}/statements.
// Period [from, to) by movement time; from defaults to the beginning, to to now. Writes to stdout
// unless --out is given. Exit codes: 0 done, 1 failure (unknown merchant, database unavailable),
// 2 usage error.
import fs from 'node:fs';
import { buildStatement, statementCsv } from '../projections/statements.ts';
import { projectionStatus } from '../projections/rebuild.ts';
import { walletMovementsProjection } from '../projections/wallet-movements.ts';
import { argumentsOrUsage, CliError, UsageError, parseOptions, runCli, withService } from './shared.ts';

const USAGE = `usage: npm run statement -- --merchant <merchant id> --currency <XAF|XOF> [--from <ISO time>] [--to <ISO time>]
                             [--format csv|json] [--out <file>]`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function time(raw: string | undefined, name: string, fallback: Date): Date {
  if (raw === undefined) return fallback;
  const d = new Date(raw);
  if (Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO date-time, got "${raw}"`);
  return d;
}

/** The statement asked for, its format and where to write it. */
function parseStatement(argv: string[]) {
  const o = parseOptions(argv, ['merchant', 'currency', 'from', 'to', 'format', 'out']);
  if (!o.merchant || !UUID.test(o.merchant)) throw new UsageError('--merchant <merchant id> is required (a uuid)');
  if (o.currency !== 'XAF' && o.currency !== 'XOF') throw new UsageError('--currency must be XAF or XOF');
  const format = o.format ?? 'csv';
  if (format !== 'csv' && format !== 'json') throw new UsageError('--format must be csv or json');
  const from = time(o.from, 'from', new Date(0));
  const to = time(o.to, 'to', new Date());
  if (from.getTime() >= to.getTime()) throw new UsageError('--from must be before --to');
  return { q: { merchantId: o.merchant.toLowerCase(), currency: o.currency, from, to }, format, out: o.out };
}

async function main(argv: string[]): Promise<number> {
  const asked = argumentsOrUsage(() => parseStatement(argv), USAGE);
  if (asked === 2) return 2;
  const { args: { q, format, out }, config } = asked;
  return withService(config, async (db, store) => {
    if (!(await db.knex('merchants').where({ id: q.merchantId }).first('id'))) throw new CliError(`no merchant ${q.merchantId}`);
    // Settled only if the movements' read model has every event (no service may be projecting them right now).
    const [status] = await projectionStatus(db.knex, store, [walletMovementsProjection]);
    const st = await buildStatement(db.knex, { ...q, readModelsAtHead: status!.lag === 0 });
    const text = format === 'csv' ? statementCsv(st) : `${JSON.stringify(st, null, 2)}\n`;
    if (out) fs.writeFileSync(out, text);
    else process.stdout.write(text);
    process.stderr.write(`${st.lines.length} movements; opening available ${st.opening.available} reserved ${st.opening.reserved}; ` +
      `closing available ${st.closing.available} reserved ${st.closing.reserved}; ${st.reconciled ? 'reconciled' : 'NOT RECONCILED'}\n`);
    return st.reconciled ? 0 : 1;
  });
}

runCli('statement', main);
