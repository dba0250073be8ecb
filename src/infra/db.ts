// The one database handle: knex over node-postgres (DATABASE_URL) or over PGlite (embedded).
// Both speak real PostgreSQL, so every query, lock and xid8 function behaves the same on either.
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { prepareByText } from './prepared-statements.ts';
import type { PGlite as PGliteType } from '@electric-sql/pglite';
import { migrationSource } from '../projections/migrations/index.ts';
import { ensurePgliteDir } from './pglite-dir.ts';
import { DEFAULT_PGLITE_SHARED_BUFFERS_MB, PGLITE_STATISTICS_TARGET, pgliteStartParams } from './pglite-params.ts';
import { PLAN_EACH_CALL, preparePglite } from './pglite-prepared.ts';
import { takeTurns } from './pglite-turns.ts';

// int8 (bigint) and numeric come back as strings by default; keep them exact: positions are bigint.
pg.types.setTypeParser(20, (v) => v);

export type DbKind = 'postgres' | 'pglite';

export interface Database {
  knex: Knex;
  kind: DbKind;
  /** For LISTEN/NOTIFY wake-ups across processes (PostgreSQL only). */
  url: string | undefined;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Directory for PGlite's files; undefined = in memory (tests). */
  pgliteDir?: string | undefined;
  poolMax?: number;
  /** PGlite's shared_buffers (PGLITE_SHARED_BUFFERS_MB); DEFAULT_PGLITE_SHARED_BUFFERS_MB when unset. */
  pgliteSharedBuffersMb?: number;
}

/** The embedded database directory is held by another live process (the service, or this CLI). */
export class DatabaseInUseError extends Error {
  constructor(readonly dir: string, readonly pid: number, readonly lockFile: string) {
    super(`the embedded database ${dir} is in use by process ${pid} (lock file ${lockFile})`);
    this.name = 'DatabaseInUseError';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite does not stop a second process from opening its directory (both would write the same
 * files): `<dir>.lock` holds the pid of the process that has it open. A lock whose process is gone
 * (a crash) is taken over. Returns the release function.
 */
function lockPgliteDir(dir: string): () => void {
  const file = `${dir}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
        } catch { /* already gone */ }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = NaN;
    try {
      holder = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
    } catch { /* removed meanwhile: try again */ }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
      throw new DatabaseInUseError(dir, holder, file);
    }
    fs.rmSync(file, { force: true });
  }
  throw new DatabaseInUseError(dir, NaN, file);
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
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
    return { knex, kind: 'postgres', url: opts.databaseUrl, close: () => knex.destroy() };
  }
  const dir = opts.pgliteDir ? path.resolve(opts.pgliteDir) : undefined;
  if (dir) fs.mkdirSync(path.dirname(dir), { recursive: true });
  const unlock = dir ? lockPgliteDir(dir) : () => undefined;
  if (dir) {
    try {
      await ensurePgliteDir(dir);
    } catch (err) {
      unlock();
      throw err;
    }
  }
  // Loaded only in the embedded mode: a service on PostgreSQL never pays for the WebAssembly build.
  const { PGlite, protocol, parse } = await import('@electric-sql/pglite');
  const { default: ClientPgLite } = await import('knex-pglite');
  const pglite: PGliteType = new PGlite(dir, {
    startParams: pgliteStartParams(PGlite.defaultStartParams, opts.pgliteSharedBuffersMb ?? DEFAULT_PGLITE_SHARED_BUFFERS_MB),
  });
  await pglite.waitReady.catch((err: unknown) => {
    unlock();
    throw err;
  });
  // Each text parsed once and each call planned (pglite-prepared.ts), small ANALYZE samples
  // (pglite-params.ts); statements give the event loop a turn (pglite-turns.ts).
  await pglite.exec(`${PLAN_EACH_CALL}; ${PGLITE_STATISTICS_TARGET}`).catch(async (err: unknown) => {
    await pglite.close().catch(() => undefined);
    unlock();
    throw err;
  });
  takeTurns(preparePglite(pglite, { serialize: protocol.serialize, parseResults: parse.parseResults }));
  const knex = knexFactory({
    client: ClientPgLite as unknown as typeof knexFactory.Client,
    dialect: 'postgres',
    connection: { pglite } as unknown as Knex.StaticConnectionConfig,
  });
  return {
    knex,
    kind: 'pglite',
    url: undefined,
    close: async () => {
      await knex.destroy();
      await pglite.close().catch(() => undefined);
      unlock();
    },
  };
}

/** An advisory lock key of our own: processes of one deployment migrate one at a time. */
const MIGRATION_LOCK_KEY = 0x6d706170; // "mpap"

export async function migrate(db: Database): Promise<void> {
  if (db.kind !== 'postgres') {
    // PGlite: one process only (its directory is locked), nobody to race with.
    await db.knex.migrate.latest({ migrationSource });
    return;
  }
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
