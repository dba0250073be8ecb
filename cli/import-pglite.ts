// `npm run import-pglite`: carries a data directory of an earlier version's embedded mode (PGlite, in
// $DATA_DIR/pglite) into this version's embedded PostgreSQL ($DATA_DIR/postgres). Both are PostgreSQL
// with the same migrations, so every table is copied row for row (the event store, the read models
// and their checkpoints, the idempotency keys, the durable jobs, the sealed secrets, the sandbox
// provider's books): the service then starts where the old one stopped, with nothing to replay.
// The old directory is only read, never changed. Run it once, with the service stopped.
// Exit codes: 0 imported, 1 failure (nothing to import, already imported), 2 usage error.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../infra/config.ts';
import { embeddedDatabaseUrl, migrate, openDatabase } from '../infra/db.ts';
import { copyTables, type RowSource } from '../infra/copy-tables.ts';
import { CliError, runCli } from './shared.ts';

const USAGE = `usage: npm run import-pglite

Copies the earlier embedded database in $DATA_DIR/pglite (PGlite) into this version's embedded
PostgreSQL under $DATA_DIR, once. The old directory is left as it is.`;

/** A PGlite database as the copy reads it. */
async function pgliteSource(dir: string): Promise<RowSource & { close(): Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite(dir);
  await db.waitReady;
  return {
    query: async <R>(sql: string, params: unknown[] = []) => (await db.query<R>(sql, params)).rows,
    close: () => db.close(),
  };
}

async function main(argv: string[]): Promise<number> {
  if (argv.length > 0) {
    process.stderr.write(`unknown argument "${argv[0]}"\n\n${USAGE}\n`);
    return 2;
  }
  let config;
  try {
    config = loadConfig(process.env, []);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
  if (config.databaseUrl) throw new CliError('DATABASE_URL is set: the import fills the embedded PostgreSQL under DATA_DIR only');
  const old = path.join(config.dataDir, 'pglite');
  if (!fs.existsSync(path.join(old, 'PG_VERSION'))) throw new CliError(`no earlier embedded database at ${old}`);
  const embedded = (await embeddedDatabaseUrl(config.dataDir, (m) => process.stderr.write(`${m}\n`), true, { pgliteImport: true }))!;
  const target = await openDatabase({ databaseUrl: embedded.url, poolMax: 2 });
  const source = await pgliteSource(old);
  try {
    await migrate(target);
    const events = Number((await target.knex.raw<{ rows: Array<{ n: string }> }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
    if (events > 0) throw new CliError(`the embedded PostgreSQL under ${config.dataDir} already holds ${events} events: imported before, or in use`);
    const copied = await copyTables(source, target.knex, (table, rows) => process.stderr.write(`${table}: ${rows} rows\n`));
    const total = copied.reduce((n, c) => n + c.rows, 0);
    process.stdout.write(`imported ${total} rows in ${copied.length} tables from ${old}; the service can start on ${config.dataDir}\n`);
    return 0;
  } finally {
    await source.close().catch(() => undefined);
    await target.close();
    if (embedded.server.startedHere) await embedded.server.stop();
  }
}

runCli('import-pglite', main);
