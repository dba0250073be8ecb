// What the operator CLIs (`npm run projections`, `audit`, `statement`) share: opening the service's
// database and event store with the service's configuration, and the exit-code conventions
// (0 done, 1 failure or discrepancy, 2 usage error).
import fs from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../infra/config.ts';
import { migrate, openConfiguredDatabase, PgliteDataDirError, type Database } from '../infra/db.ts';
import { systemClock } from '../infra/clock.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import type { EventStore } from '../infra/eventstore/types.ts';

export class UsageError extends Error {}
export class CliError extends Error {}

/**
 * The database the service uses: DATABASE_URL, or the embedded PostgreSQL under $DATA_DIR, found
 * running beside the service (left running after) or started for this command (stopped after).
 */
export async function openServiceDatabase(config: Config): Promise<Database> {
  if (!config.databaseUrl && !fs.existsSync(config.dataDir)) {
    throw new CliError(`no data directory at ${config.dataDir}: set DATA_DIR to the service's data directory, or DATABASE_URL`);
  }
  let db: Database;
  try {
    db = await openConfiguredDatabase(config, { log: () => undefined, stopServer: 'if-started', poolMax: 2 });
  } catch (err) {
    if (err instanceof PgliteDataDirError) throw new CliError(err.message);
    throw new CliError(`cannot open the database${config.databaseUrl ? ' at DATABASE_URL' : ` under ${config.dataDir}`}: ${(err as Error).message}`);
  }
  try {
    await db.knex.raw('SELECT 1');
  } catch (err) {
    await db.close();
    throw new CliError(`cannot reach the database: ${(err as Error).message}`);
  }
  return db;
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

/**
 * The command's arguments and the service's configuration, or the exit code 2 after saying what
 * is wrong with either (a usage error, a configuration error) and the command's usage.
 */
export function argumentsOrUsage<A>(parse: () => A, usage: string): { args: A; config: Config } | 2 {
  try {
    const args = parse();
    return { args, config: loadConfig(process.env, []) };
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n\n${usage}\n`);
      return 2;
    }
    throw err;
  }
}
