// Copies every table of the service's schema from one PostgreSQL database into another whose schema
// was migrated alike (npm run import-pglite: an earlier version's PGlite directory into the embedded
// PostgreSQL). Rows go in pages of PAGE_ROWS, in physical order (a TID range scan, no sort), as JSON
// read back by json_populate_recordset, so every type keeps its text form. Only the columns both
// sides have are copied (a column a later migration added takes its default), generated columns
// are left to the target, and each sequence is set past the largest value copied. One transaction:
// all or nothing (a failed import can run again), with foreign keys checked by neither side's order
// (session_replication_role = replica: the rows were consistent where they come from; needs the
// embedded server's superuser).
import type { Knex } from 'knex';
import { ident } from './sql-ident.ts';

/** What the copy reads: one query at a time, rows as plain objects. */
export interface RowSource {
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
}

const PAGE_ROWS = 2_000;
/** knex's own bookkeeping: the target's migrations are its own. */
const SKIPPED = new Set(['knex_migrations', 'knex_migrations_lock']);

async function columnsOf(q: (sql: string, params: unknown[]) => Promise<Array<{ table_name: string; column_name: string }>>) {
  const rows = await q(
    `SELECT table_name, column_name FROM information_schema.columns c
      WHERE table_schema = 'public' AND is_generated = 'NEVER'
        AND EXISTS (SELECT 1 FROM information_schema.tables t WHERE t.table_schema = 'public' AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE')
      ORDER BY table_name, ordinal_position`, []);
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.table_name, [...(out.get(r.table_name) ?? []), r.column_name]);
  return out;
}

export function copyTables(source: RowSource, knex: Knex, onTable: (table: string, rows: number) => void): Promise<Array<{ table: string; rows: number }>> {
  return knex.transaction(async (target) => {
    await target.raw('SET LOCAL session_replication_role = replica');
    const copied = await copyEach(source, target, onTable);
    await advanceSequences(target);
    return copied;
  });
}

async function copyEach(source: RowSource, target: Knex.Transaction, onTable: (table: string, rows: number) => void): Promise<Array<{ table: string; rows: number }>> {
  const from = await columnsOf((sql, p) => source.query(sql, p));
  const to = await columnsOf(async (sql, p) => (await target.raw(sql, p as Knex.RawBinding[])).rows);
  const copied: Array<{ table: string; rows: number }> = [];
  for (const [table, targetCols] of to) {
    const sourceCols = from.get(table);
    if (!sourceCols || SKIPPED.has(table)) continue;
    const cols = targetCols.filter((c) => sourceCols.includes(c)).map(ident).join(', ');
    let rows = 0;
    let after = '(0,0)';
    for (;;) {
      const page = await source.query<{ c: string; j: string }>(
        `SELECT ctid::text AS c, row_to_json(x)::text AS j FROM ${ident(table)} x WHERE ctid > $1::tid ORDER BY ctid LIMIT ${PAGE_ROWS}`, [after]);
      if (page.length === 0) break;
      await target.raw(`INSERT INTO ${ident(table)} (${cols}) SELECT ${cols} FROM json_populate_recordset(NULL::${ident(table)}, ?::json)`,
        [`[${page.map((r) => r.j).join(',')}]`]);
      rows += page.length;
      after = page[page.length - 1]!.c;
    }
    onTable(table, rows);
    copied.push({ table, rows });
  }
  return copied;
}

/** Every sequence owned by a column set past the column's largest value. */
async function advanceSequences(target: Knex.Transaction): Promise<void> {
  const owned = await target.raw<{ rows: Array<{ seq: string; tbl: string; col: string }> }>(
    `SELECT s.relname AS seq, t.relname AS tbl, a.attname AS col
       FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
       JOIN pg_class t ON t.oid = d.refobjid JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
       JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = 'public'`);
  for (const { seq, tbl, col } of owned.rows) {
    await target.raw(`SELECT setval(?::regclass, COALESCE(max(${ident(col)}), 1), max(${ident(col)}) IS NOT NULL) FROM ${ident(tbl)}`, [seq]);
  }
}
