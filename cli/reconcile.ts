// `npm run reconcile -- [--provider sandbox|mtn_momo|pawapay] [--from ISO] [--to ISO] [--format table|csv]`:
// the reconciliation report of GET /admin/reconciliation (commands/reconciliation.ts): every provider
// leg started in [from, to) (default: the last 24 hours) compared with its provider's status. The
// findings go to stdout (a table, or CSV); a progress bar goes to stderr (redrawn in place on a
// terminal, a line per 10% otherwise), then a summary line. It asks the providers this service is
// configured with (the same environment as the service: MTN_MOMO_*, PAWAPAY_*).
// Exit codes: 0 every leg agrees, 1 a finding (or a failure), 2 usage error.
import { randomBytes } from 'node:crypto';
import type { Config } from '../infra/config.ts';
import { systemClock } from '../infra/clock.ts';
import { Secrets } from '../infra/secrets.ts';
import { providers } from '../infra/providers/index.ts';
import { PROVIDER_NAMES } from '../domain/operator-routing.ts';
import { FINDINGS, PeriodTooLarge, reconcile, type ReconciliationReport } from '../commands/reconciliation.ts';
import { argumentsOrUsage, CliError, UsageError, parseOptions, runCli, withService } from './shared.ts';

const USAGE = `usage: npm run reconcile -- [--provider ${PROVIDER_NAMES.join('|')}] [--from <ISO time>] [--to <ISO time>]
                             [--format table|csv]

Compares every provider leg started in [from, to) (default: the last 24 hours) with its provider's
status and lists the legs whose outcomes disagree, the legs the provider never saw, the legs pending
past PROVIDER_PENDING_ALERT_SECONDS and the legs whose provider could not be asked. Exit code 1 when
anything is listed.`;

const COLUMNS = ['reference', 'owner', 'kind', 'provider', 'provider_reference', 'ours', 'theirs', 'finding', 'detail', 'created_at'] as const;

interface Args { provider: string | undefined; from: Date; to: Date; format: 'table' | 'csv' }

function time(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined) return undefined;
  const d = new Date(raw);
  if (Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO date-time, got "${raw}"`);
  return d;
}

function parse(argv: string[]): Args {
  const o = parseOptions(argv, ['provider', 'from', 'to', 'format']);
  if (o.provider !== undefined && !(PROVIDER_NAMES as readonly string[]).includes(o.provider)) {
    throw new UsageError(`--provider must be one of ${PROVIDER_NAMES.join(', ')}`);
  }
  const format = o.format ?? 'table';
  if (format !== 'table' && format !== 'csv') throw new UsageError('--format must be table or csv');
  const to = time(o.to, 'to') ?? new Date();
  const from = time(o.from, 'from') ?? new Date(to.getTime() - 24 * 3600 * 1000);
  if (from.getTime() >= to.getTime()) throw new UsageError('--from must be before --to');
  return { provider: o.provider, from, to, format };
}

/** One CSV cell: quoted when needed; a cell a spreadsheet would run as a formula gets a `'`. */
function csvCell(v: string | null): string {
  const s = v === null ? '' : /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function reportCsv(r: ReconciliationReport): string {
  return [COLUMNS.join(','), ...r.findings.map((f) => COLUMNS.map((c) => csvCell(f[c])).join(','))].map((l) => `${l}\n`).join('');
}

function reportTable(r: ReconciliationReport): string {
  if (r.findings.length === 0) return '';
  const rows = [[...COLUMNS] as string[], ...r.findings.map((f) => COLUMNS.map((c) => f[c] ?? '-'))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => `${row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`).join('');
}

function summary(r: ReconciliationReport): string {
  const listed = FINDINGS.map((k) => `${r.counts[k]} ${k}`).join(', ');
  return `${r.provider ?? 'every provider'}, legs started in [${r.from}, ${r.to}): ${r.checked} checked, ${r.agreeing} agree; ${listed}\n`;
}

/**
 * `[#####.....] 512/1024 legs` on stderr: redrawn in place (at most every 100 ms) on a terminal,
 * else a line at each tenth done.
 */
function progressBar(stream: NodeJS.WriteStream = process.stderr): { update(done: number, total: number): void; end(): void } {
  const tty = stream.isTTY === true;
  const width = 10;
  let lastDraw = 0;
  let lastTenth = -1;
  let drawn = false;
  return {
    update(done, total) {
      const fraction = total > 0 ? Math.min(1, done / total) : 1;
      const tenth = Math.floor(fraction * 10);
      const now = Date.now();
      if (tty ? now - lastDraw < 100 && done < total : tenth === lastTenth) return;
      lastDraw = now;
      lastTenth = tenth;
      const filled = Math.round(fraction * width);
      const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} legs`;
      stream.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
      drawn = true;
    },
    end() {
      if (drawn && tty) stream.write('\n');
    },
  };
}

async function run(config: Config, args: Args): Promise<number> {
  return withService(config, async (db, store) => {
    // A status query neither signs nor checks a signature: the sandbox's key is never used here.
    const secrets = new Secrets(config.secretHashKey ?? randomBytes(32).toString('base64url'));
    const adapters = providers({ knex: db.knex, clock: systemClock, secrets, config }).byName;
    if (args.provider !== undefined && !adapters.has(args.provider)) {
      throw new CliError(`provider ${args.provider} is not configured (its settings are not all set in this environment)`);
    }
    const deps = { knex: db.knex, store, clock: systemClock, adapters, pendingAlertSeconds: config.providers.pendingAlertSeconds };
    const bar = progressBar();
    let report: ReconciliationReport;
    try {
      report = await reconcile(deps, { provider: args.provider, from: args.from, to: args.to }, { onProgress: (done, total) => bar.update(done, total) });
    } catch (err) {
      if (err instanceof PeriodTooLarge) throw new CliError(err.message);
      throw err;
    } finally {
      bar.end();
    }
    process.stdout.write(args.format === 'csv' ? reportCsv(report) : reportTable(report));
    process.stderr.write(summary(report));
    return report.findings.length > 0 ? 1 : 0;
  });
}

async function main(argv: string[]): Promise<number> {
  const asked = argumentsOrUsage(() => parse(argv), USAGE);
  return asked === 2 ? 2 : run(asked.config, asked.args);
}

runCli('reconcile', main);
