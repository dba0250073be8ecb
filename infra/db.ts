// The one database handle: knex over node-postgres, on the PostgreSQL of DATABASE_URL or on the
// embedded server the service runs itself under $DATA_DIR (embedded-postgres.ts): one code path.
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { prepareByText } from './prepared-statements.ts';
import { migrationSource } from './migrations/index.ts';
import { embeddedPostgres, type EmbeddedServer } from './embedded-postgres.ts';

// int8 (bigint) and numeric come back as strings by default; keep them exact: positions are bigint.
pg.types.setTypeParser(20, (v) => v);

export interface Database {
  knex: Knex;
  /** For LISTEN/NOTIFY wake-ups across processes and for the event store's own writer. */
  url: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string;
  poolMax?: number;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const knex = knexFactory({
    client: 'pg',
    connection: opts.databaseUrl,
    pool: {
      min: 0, max: opts.poolMax ?? 10,
      afterCreate: (conn: pg.Client, done: (err: Error | null, c: pg.Client) => void) => {
        prepareByText(conn);
        done(null, conn);
      },
    },
  });
  return { knex, url: opts.databaseUrl, close: () => knex.destroy() };
}

/** The embedded mode's database on its server (the server's own `postgres` database stays empty). */
export const EMBEDDED_DATABASE = 'payments';

/** A data directory of the previous embedded mode (PGlite): never silently ignored. */
export class PgliteDataDirError extends Error {}

function refusePgliteDir(dataDir: string): void {
  const old = path.join(dataDir, 'pglite');
  if (!fs.existsSync(old) || fs.existsSync(path.join(dataDir, 'postgres'))) return;
  throw new PgliteDataDirError(
    `${old} holds the database of an earlier version's embedded mode (PGlite), which this version no longer runs. ` +
    'Nothing was changed, and nothing will be: its events stay in that directory, and the earlier version still runs ' +
    'on it. To carry them into this version, run `npm run import-pglite` once (docs/OPERATIONS.md); to start afresh ' +
    'instead, point DATA_DIR at another directory.',
  );
}

/**
 * The embedded server for `dataDir`, with the service's database created on first use. `start`:
 * false answers undefined when no server runs there (a CLI that must not start one).
 */
export async function embeddedDatabaseUrl(
  dataDir: string, log: (msg: string) => void, start = true, opts: { pgliteImport?: boolean } = {},
): Promise<{ url: string; server: EmbeddedServer } | undefined> {
  if (!opts.pgliteImport) refusePgliteDir(dataDir);
  const server = await embeddedPostgres({ dataDir, log, start });
  if (!server) return undefined;
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile by another process (a CLI beside a starting service)
      });
    }
  } finally {
    await admin.end();
  }
  return { url: server.url(EMBEDDED_DATABASE), server };
}

/**
 * Connections to the embedded server: each is a PostgreSQL backend of 5 to 12 MB on the service's own
 * machine (bench/PROFILE.md §29), and the server shares its cores with the service; 8 measured the
 * same throughput as 10 on two cores, 6 lost 7%.
 */
export const EMBEDDED_POOL_MAX = 8;

/**
 * The database the configuration names: DATABASE_URL, or the embedded server under DATA_DIR
 * (started, or found running after a killed service). `stopServer`: when the embedded server is
 * stopped with the database: 'always' (the service owns it), 'if-started' (a CLI beside a service).
 */
export async function openConfiguredDatabase(
  config: { databaseUrl: string | undefined; dataDir: string },
  opts: { log: (msg: string) => void; stopServer: 'always' | 'if-started'; poolMax?: number },
): Promise<Database> {
  if (config.databaseUrl) return openDatabase({ databaseUrl: config.databaseUrl, ...(opts.poolMax ? { poolMax: opts.poolMax } : {}) });
  const embedded = (await embeddedDatabaseUrl(config.dataDir, opts.log))!;
  const db = await openDatabase({ databaseUrl: embedded.url, poolMax: opts.poolMax ?? EMBEDDED_POOL_MAX });
  return {
    ...db,
    close: async () => {
      await db.close();
      if (opts.stopServer === 'always' || embedded.server.startedHere) await embedded.server.stop();
    },
  };
}

/** An advisory lock key of our own: processes of one deployment migrate one at a time. */
const MIGRATION_LOCK_KEY = 0x6d706170; // "mpap"

export async function migrate(db: Database): Promise<void> {
  // Several API and worker processes start together against one PostgreSQL: knex's own lock
  // table answers "already locked" to the losers (and creating it can race), so the first holds
  // a transaction-scoped advisory lock while it migrates and the others wait, then find nothing
  // left to do. The migrations run on other pool connections; the lock's transaction only waits.
  await db.knex.transaction(async (tx) => {
    await tx.raw('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK_KEY]);
    await db.knex.migrate.latest({ migrationSource });
  });
}

export async function migrationsApplied(db: Database): Promise<boolean> {
  const [, pending] = (await db.knex.migrate.list({ migrationSource })) as [unknown[], unknown[]];
  return pending.length === 0;
}
