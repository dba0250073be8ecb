// Writes a batch of read-model rows in one statement, whatever their number: the rows travel as one
// JSON array and `jsonb_populate_recordset(NULL::<table>, …)` turns them into the table's own row
// type (column types, jsonb columns included, come from the table, not from us). A multi-row
// INSERT built by knex costs a placeholder per value to build and to bind, and had to be cut into
// chunks under PostgreSQL's 65,535-parameter limit; this is one parameter. The table name resolves
// through the search_path, so a rebuild's shadow copy (projections/shadow.ts) is written the same way.
import type { Knex } from 'knex';
import { ident } from '../infra/sql-ident.ts';

/** On a key already there: keep the row, or replace it if the new one has a higher `version`. */
export type OnConflict = 'ignore' | 'update-if-newer';

/**
 * Inserts `rows` (objects keyed by column name; jsonb columns given as values, not as JSON text)
 * into `table`; on a conflict on `key`, as `onConflict` says.
 */
export async function upsertRows(
  tx: Knex | Knex.Transaction, table: string, key: string[], rows: Array<Record<string, unknown>>, onConflict: OnConflict,
): Promise<void> {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const list = cols.map(ident).join(', ');
  const action = onConflict === 'ignore'
    ? 'DO NOTHING'
    : `DO UPDATE SET ${cols.filter((c) => !key.includes(c)).map((c) => `${ident(c)} = excluded.${ident(c)}`).join(', ')}
       WHERE ${ident(table)}.version < excluded.version`;
  await tx.raw(
    `INSERT INTO ${ident(table)} (${list}) SELECT ${list} FROM jsonb_populate_recordset(NULL::${ident(table)}, ?::jsonb)
     ON CONFLICT (${key.map(ident).join(', ')}) ${action}`,
    [JSON.stringify(rows)],
  );
}
