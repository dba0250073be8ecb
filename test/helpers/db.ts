// A fresh, migrated database for one test file: a new PostgreSQL database on the server named by
// DATABASE_URL when it is set, otherwise an in-memory PGlite. Dropped at teardown.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, migrate, type Database } from '../../src/infra/db.ts';

export const realPostgres = process.env.DATABASE_URL;

export async function freshDatabaseUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(realPostgres!);
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: realPostgres });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: realPostgres });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface TestDatabase {
  db: Database;
  url: string | undefined;
  teardown(): Promise<void>;
}

export async function testDatabase(opts: { poolMax?: number } = {}): Promise<TestDatabase> {
  if (realPostgres) {
    const fresh = await freshDatabaseUrl();
    const db = await openDatabase({ databaseUrl: fresh.url, poolMax: opts.poolMax ?? 20 });
    await migrate(db);
    return {
      db,
      url: fresh.url,
      teardown: async () => {
        await db.close();
        await fresh.drop();
      },
    };
  }
  const db = await openDatabase({});
  await migrate(db);
  return { db, url: undefined, teardown: () => db.close() };
}

export const dbLabel = realPostgres ? 'postgres' : 'pglite';
