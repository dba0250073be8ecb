// A fresh, migrated database for one test, made from a migrated template (`CREATE DATABASE …
// TEMPLATE`, a file copy: no initdb, no migrations per test). The server is the one DATABASE_URL
// names, or else the test run's embedded PostgreSQL (the service's own embedded server code, under
// the system's temporary directory), started by the first test file that needs it and stopped at
// the end of the run (by `npm test`, scripts/test.ts; by tap's `after` hook,
// test/helpers/stop-test-postgres.ts, when tap runs on its own). Dropped at teardown.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, migrate, type Database } from '../../infra/db.ts';
import { embeddedPostgres } from '../../infra/embedded-postgres.ts';

/** DATABASE_URL: the real-services lane. Unset: the embedded lane (a server of the run's own). */
export const realPostgres = process.env.DATABASE_URL;
export const dbLabel = realPostgres ? 'postgres' : 'embedded postgres';

/**
 * Where the embedded lane's server lives: the run's own (MPA_TEST_PG_DIR, set by `npm test`), or one
 * per checkout, shared by every file of a run of tap itself.
 */
export const TEST_SERVER_DIR = process.env.MPA_TEST_PG_DIR ?? path.join(os.tmpdir(), `mpa-test-postgres-${createHash('sha256').update(path.resolve(import.meta.dirname, '../..')).digest('hex').slice(0, 12)}`);

/** Runs `fn` holding a lock file (the run's test files start at once: one of them starts the server). */
async function locked<T>(file: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(fs.readFileSync(file, 'utf8') || '0', 10);
      let alive = false;
      try { process.kill(holder, 0); alive = true; } catch { /* gone */ }
      if (!alive) fs.rmSync(file, { force: true });
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

let serverUrl: Promise<string> | undefined;

/** The server's admin URL (its `postgres` database). */
export function testServerUrl(): Promise<string> {
  if (realPostgres) return Promise.resolve(realPostgres);
  serverUrl ??= (async () => {
    fs.mkdirSync(TEST_SERVER_DIR, { recursive: true });
    return locked(`${TEST_SERVER_DIR}.lock`, async () => {
      const server = await embeddedPostgres({ dataDir: TEST_SERVER_DIR, log: () => undefined });
      return server!.url();
    });
  })();
  return serverUrl;
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: await testServerUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

let template: Promise<string> | undefined;

/** The migrations' source text, hashed: an edited migration makes a new template too. */
function migrationsHash(): string {
  const dir = path.resolve(import.meta.dirname, '../../infra/migrations');
  const hash = createHash('sha256');
  for (const f of fs.readdirSync(dir).sort()) hash.update(f).update(fs.readFileSync(path.join(dir, f)));
  return hash.digest('hex').slice(0, 12);
}

/** The migrated template's name: one per set of migrations (a new migration makes a new one). */
function migratedTemplate(): Promise<string> {
  template ??= buildTemplate(`mpa_template_${migrationsHash()}`);
  return template;
}

/**
 * Builds the migrated template `name` unless it exists; the run's files call this at once, and all
 * of them get the one template.
 */
export async function buildTemplate(name: string): Promise<string> {
  const exists = async () => admin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1 AND datallowconn', [name])).rowCount === 1);
  if (await exists()) return name;
  // Built under another name and renamed when complete: a file killed mid-way leaves no half template.
  const building = `${name}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${building}`));
  const db = await openDatabase({ databaseUrl: withDatabase(await testServerUrl(), building), poolMax: 2 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await admin(async (c) => {
    try {
      await c.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (err) {
      // Another file made it first: 42P04 when its rename had committed, 23505 (the catalog's
      // unique index) when both renames ran at once.
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err;
      await c.query(`DROP DATABASE ${building}`);
    }
  });
  return name;
}

/** A new database copied from the migrated template. */
export async function freshDatabaseUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const from = ` TEMPLATE ${await migratedTemplate()}`;
  // Copying a template fails while a session is connected to it (another file finishing its build).
  for (let attempt = 1; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE ${name}${from}`));
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: withDatabase(await testServerUrl(), name),
    drop: () => admin(async (c) => { await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); }),
  };
}

export interface TestDatabase {
  db: Database;
  url: string;
  teardown(): Promise<void>;
}

export async function testDatabase(opts: { poolMax?: number } = {}): Promise<TestDatabase> {
  const fresh = await freshDatabaseUrl();
  const db = await openDatabase({ databaseUrl: fresh.url, poolMax: opts.poolMax ?? 20 });
  await migrate(db); // nothing to do on a copy of the template; kept so the test sees the latest schema
  return {
    db,
    url: fresh.url,
    teardown: async () => {
      await db.close();
      await fresh.drop();
    },
  };
}

/**
 * What every other busy session of the database is doing, one line each, with the sessions that
 * block it (pg_blocking_pids): named in a failure, so a wait that never ended says what held it.
 * A connection of its own, bounded: it answers even when the pools under test are stuck.
 */
export async function busySessions(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 5_000 });
  try {
    await c.connect();
    const r = await c.query(
      `SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) AS blocked_by, left(query, 120) AS query
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
    );
    return `busy sessions: ${r.rows.map((x) => JSON.stringify(x)).join('; ') || 'none'}`;
  } catch (err) {
    return `busy sessions unreadable: ${(err as Error).message}`;
  } finally {
    await c.end().catch(() => undefined);
  }
}
