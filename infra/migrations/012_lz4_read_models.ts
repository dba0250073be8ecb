import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Bench issue 8: a payment row (its rendered body and its stream's events, ~3 KB) is over the
// 2 KB TOAST threshold, so every write compresses it; with the default pglz that was most of a
// rebuild's time (5,000 payin rows: 320 ms with pglz, 174 ms with lz4, measured on this server).
// lz4 where the server was built with it (Debian's PostgreSQL is; PGlite is not, and keeps pglz).
// Only new values are written with it: existing rows stay readable as they are.
const COLUMNS: Array<[string, string]> = [
  ['quotes', 'events'], ['quotes', 'body'], ['payins', 'events'], ['payins', 'body'],
  ['payouts', 'events'], ['payouts', 'body'], ['transfers', 'events'], ['transfers', 'body'],
];

async function lz4Available(knex: Knex): Promise<boolean> {
  const r = await knex.raw<{ rows: Array<{ enumvals: string[] | null }> }>(
    `SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'`,
  );
  return (r.rows[0]?.enumvals ?? []).includes('lz4');
}

async function setCompression(knex: Knex, method: 'lz4' | 'pglz'): Promise<void> {
  if (!(await lz4Available(knex))) return;
  await runStatements(knex, COLUMNS.map(([table, column]) => `ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION ${method}`));
}

export async function up(knex: Knex): Promise<void> {
  await setCompression(knex, 'lz4');
}

export async function down(knex: Knex): Promise<void> {
  await setCompression(knex, 'pglz');
}
