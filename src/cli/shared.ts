// What the operator CLIs (`npm run projections`, `audit`, `statement`) share: opening the service's
// database and event store with the service's configuration, and the exit-code conventions
// (0 done, 1 failure or discrepancy, 2 usage error).
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { DatabaseInUseError, migrate, openDatabase, type Database } from '../infra/db.ts';
import { systemClock } from '../infra/clock.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import type { EventStore } from '../infra/eventstore/types.ts';

export class UsageError extends Error {}
export class CliError extends Error {}

/** The database the service uses: DATABASE_URL, or the embedded PGlite under $DATA_DIR/pglite. */
export async function openServiceDatabase(config: Config): Promise<Database> {
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
    return await openDatabase({ pgliteDir: dir, pgliteSharedBuffersMb: config.pgliteSharedBuffersMb });
  } catch (err) {
    if (err instanceof DatabaseInUseError) {
      throw new CliError(
        `the embedded database ${dir} is open in process ${err.pid} (the service?). An embedded PGlite ` +
        'database can be opened by one process only: stop the service first, then run this command again ' +
        '(or use the operator API of the running service). ' +
        `(If no service is running, remove the stale lock file ${err.lockFile}.)`,
      );
    }
    throw new CliError(
      `cannot open the embedded database ${dir}: ${(err as Error).message}. If the service is running, stop it first: ` +
      'an embedded PGlite database can be opened by one process only.',
    );
  }
}

/** Opens the database (migrated as the service would) and the event store, runs `fn`, closes both. */
export async function withService<T>(config: Config, fn: (db: Database, store: EventStore) => Promise<T>): Promise<T> {
  const db = await openServiceDatabase(config);
  // The event store the service uses: KurrentDB when EVENTSTORE_URL is set, else the events table.
  // (KurrentDB's client is loaded only when used.)
  const store: EventStore = config.eventstoreUrl
    ? new (await import('../infra/eventstore/kurrent.ts')).KurrentEventStore(config.eventstoreUrl, systemClock)
    : new PostgresEventStore(db, systemClock);
  try {
    // The schema the service would migrate to at start (an upgrade may bring a projection's table).
    await migrate(db);
    return await fn(db, store);
  } finally {
    await store.close();
    await db.close();
  }
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Runs a CLI's main: exits with its code; a CliError is one line on stderr, anything else its stack. */
export function runCli(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof CliError ? err.message : (err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}

/** `--name value` or `--name=value` options; anything else is a usage error. */
export function parseOptions(argv: string[], known: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !known.includes(m[1]!)) throw new UsageError(`unknown argument "${arg}"`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${m[1]} needs a value`);
    out[m[1]!] = value;
  }
  return out;
}
