// The one database handle: knex over node-postgres (DATABASE_URL) or over PGlite (embedded).
// Both speak real PostgreSQL, so every query, lock and xid8 function behaves the same on either.
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import ClientPgLite from 'knex-pglite';
import { migrationSource } from '../projections/migrations/index.ts';

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
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const knex = knexFactory({
      client: 'pg',
      connection: opts.databaseUrl,
      pool: { min: 0, max: opts.poolMax ?? 10 },
    });
    return { knex, kind: 'postgres', url: opts.databaseUrl, close: () => knex.destroy() };
  }
  if (opts.pgliteDir) fs.mkdirSync(opts.pgliteDir, { recursive: true });
  const pglite = new PGlite(opts.pgliteDir ? path.resolve(opts.pgliteDir) : undefined);
  await pglite.waitReady;
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
    },
  };
}

export async function migrate(db: Database): Promise<void> {
  await db.knex.migrate.latest({ migrationSource });
}

export async function migrationsApplied(db: Database): Promise<boolean> {
  const [, pending] = (await db.knex.migrate.list({ migrationSource })) as [unknown[], unknown[]];
  return pending.length === 0;
}
