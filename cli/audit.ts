// `npm run audit [-- --json]`: the finance audit (ops/audit.ts). Replays every event, verifies the
// ledger and compares every read model with a fresh fold; prints the report (text, or the JSON the
// operator API answers with --json) to stdout and progress to stderr.
// Exit codes: 0 no discrepancy, 1 a discrepancy (or the audit could not run), 2 usage error.
// It runs beside the running service (read-only, never blocks it), on DATABASE_URL or on the
// embedded PostgreSQL under $DATA_DIR (the service's, or started for the command and stopped after).
import { projections } from '../app/registry.ts';
import { formatAuditReport, runAudit } from '../projections/finance-audit.ts';
import { argumentsOrUsage, UsageError, runCli, withService } from './shared.ts';

const USAGE = `usage: npm run audit [-- --json]

Replays every event: checks that every ledger entry balances, that per-currency totals are
conserved, that no balance ever went below zero and that each payment's money moved once; then
compares every read model with a fresh fold of the events, and every snapshot with the fold of its
stream up to its version. Exit code 1 on any discrepancy.`;

async function main(argv: string[]): Promise<number> {
  const asked = argumentsOrUsage(() => {
    for (const a of argv) if (a !== '--json') throw new UsageError(`unknown argument "${a}"`);
    return { json: argv.includes('--json') };
  }, USAGE);
  if (asked === 2) return 2;
  const { args: { json }, config } = asked;
  return withService(config, async (db, store) => {
    const tty = process.stderr.isTTY === true;
    let last = 0;
    const report = await runAudit(db.knex, store, projections, {
      onProgress: (phase, detail) => {
        const now = Date.now();
        if (phase === 'ledger' && now - last < (tty ? 200 : 5000)) return;
        last = now;
        const line = phase === 'ledger' ? `ledger: ${detail} replayed`
          : phase === 'snapshots' ? `snapshots: checking each ${detail}` : `read models: folding ${detail} afresh`;
        process.stderr.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
      },
    });
    if (tty) process.stderr.write('\r\x1b[2K');
    process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatAuditReport(report));
    return report.ok ? 0 : 1;
  });
}

runCli('audit', main);
