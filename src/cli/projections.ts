// `npm run projections -- status | rebuild [name]`: read-model maintenance, run while the service is
// stopped. Opens the database the service uses (same configuration: DATABASE_URL, or the embedded
// PGlite under $DATA_DIR/pglite). Progress goes to stderr, the summary to stdout.
// Exit codes: 0 done, 1 failure (database unavailable, rebuild interrupted), 2 usage error.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { DatabaseInUseError, migrate, openDatabase, type Database } from '../infra/db.ts';
import { systemClock } from '../infra/clock.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import type { EventStore } from '../infra/eventstore/types.ts';
import { projections } from '../registry.ts';
import type { Projection } from '../projections/projection.ts';
import { projectionStatus, rebuildProjection, type RebuildProgress } from '../projections/rebuild.ts';

const USAGE = `usage: npm run projections -- <command>

commands:
  status           each projection's checkpoint, the event store's head and the lag in events
  rebuild [name]   empty a projection's tables and replay every event into it (all projections
                   when no name is given). Stop the service first.

projections: ${projections.map((p) => p.name).join(', ')}`;

class UsageError extends Error {}
class CliError extends Error {}

type Command = { kind: 'status' } | { kind: 'rebuild'; targets: Projection[] };

function parse(argv: string[]): Command {
  const [command, ...rest] = argv;
  if (command === 'status' && rest.length === 0) return { kind: 'status' };
  if (command === 'rebuild' && rest.length <= 1) {
    const name = rest[0];
    if (name === undefined) return { kind: 'rebuild', targets: projections };
    const found = projections.find((p) => p.name === name);
    if (!found) throw new UsageError(`unknown projection "${name}"; known projections: ${projections.map((p) => p.name).join(', ')}`);
    return { kind: 'rebuild', targets: [found] };
  }
  throw new UsageError(command === undefined ? 'no command given' : `unknown command "${argv.join(' ')}"`);
}

async function open(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: 2 });
    try {
      await db.knex.raw('SELECT 1');
    } catch (err) {
      await db.close();
      throw new CliError(`cannot reach the database at DATABASE_URL: ${(err as Error).message}`);
    }
    return db;
  }
  const dir = path.join(config.dataDir, 'pglite');
  if (!fs.existsSync(dir)) {
    throw new CliError(`no embedded database at ${dir}: set DATA_DIR to the service's data directory, or DATABASE_URL`);
  }
  try {
    return await openDatabase({ pgliteDir: dir });
  } catch (err) {
    if (err instanceof DatabaseInUseError) {
      throw new CliError(
        `the embedded database ${dir} is open in process ${err.pid} (the service?). An embedded PGlite ` +
        'database can be opened by one process only: stop the service first, then run this command again. ' +
        `(If no service is running, remove the stale lock file ${err.lockFile}.)`,
      );
    }
    throw new CliError(
      `cannot open the embedded database ${dir}: ${(err as Error).message}. If the service is running, stop it first: ` +
      'an embedded PGlite database can be opened by one process only.',
    );
  }
}

function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** A progress bar with rate and ETA on stderr: redrawn in place on a terminal, a line every few seconds otherwise. */
function progressBar(name: string): { update: RebuildProgress; end(): void } {
  const tty = process.stderr.isTTY === true;
  const width = 30;
  const started = Date.now();
  let lastDraw = 0;
  let last = '';
  let drawn = false;
  const draw = (done: number, total: number, force: boolean) => {
    const now = Date.now();
    if (!force && now - lastDraw < (tty ? 100 : 5000)) return;
    if (`${done}/${total}` === last) return;
    lastDraw = now;
    last = `${done}/${total}`;
    const fraction = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(fraction * width);
    const elapsed = now - started;
    const rate = elapsed > 0 ? (done / elapsed) * 1000 : 0;
    const eta = rate > 0 && total > done ? formatDuration(((total - done) / rate) * 1000) : '0s';
    const line = `${name} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
      `${done}/${total} events, ${Math.round(rate)}/s, ETA ${eta}`;
    process.stderr.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
    drawn = true;
  };
  return {
    update: (done, total) => draw(done, total, done === 0 || done >= total),
    end: () => {
      if (drawn && tty) process.stderr.write('\n');
    },
  };
}

async function main(argv: string[]): Promise<number> {
  let command: Command;
  let config: Config;
  try {
    command = parse(argv);
    config = loadConfig(process.env, []);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }

  const db = await open(config);
  // The event store the service uses: KurrentDB when EVENTSTORE_URL is set, else the events table.
  // (KurrentDB's client is loaded only when used.)
  const store: EventStore = config.eventstoreUrl
    ? new (await import('../infra/eventstore/kurrent.ts')).KurrentEventStore(config.eventstoreUrl, systemClock)
    : new PostgresEventStore(db, systemClock);
  try {
    // The schema the service would migrate to at start (an upgrade may bring a projection's table).
    await migrate(db);
    if (command.kind === 'status') {
      const rows = await projectionStatus(db.knex, store, projections);
      const table = [
        ['projection', 'checkpoint', 'head', 'lag_events', 'state'],
        ...rows.map((r) => [r.projection, r.checkpoint.toString(), r.head.toString(), String(r.lag), r.lag === 0 ? 'up to date' : 'behind']),
      ];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
      return 0;
    }
    for (const p of command.targets) {
      const bar = progressBar(p.name);
      try {
        const r = await rebuildProjection(db.knex, store, p, bar.update);
        bar.end();
        process.stdout.write(`rebuilt ${r.projection}: ${r.events} events in ${(r.elapsedMs / 1000).toFixed(1)}s, checkpoint ${r.position}\n`);
      } catch (err) {
        bar.end();
        throw new CliError(`rebuilding ${p.name} failed: ${(err as Error).message}`);
      }
    }
    return 0;
  } finally {
    await store.close();
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`projections: ${err instanceof CliError ? err.message : (err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
