// Putting a rebuilt shadow (projections/shadow.ts) in place of the live tables, inside the swap
// transaction of rebuild.ts.
//
// The fast way moves the shadow tables in: DROP TABLE <live> and ALTER TABLE <shadow> SET SCHEMA
// <live>, a few catalog rows whatever the size, under an ACCESS EXCLUSIVE lock held until the commit
// (readers wait those milliseconds, then see the new rows; never an empty or half-built table). For
// that, the shadow must already be what the live table is (logged, same columns, defaults, storage
// and compression, same constraints and indexes under the same names, owner, grants, options):
// `prepareMove` makes it so before the lock is taken, and `moveIn` checks it again under the lock.
// Anything a moved table would not carry over (a foreign key from or to it, a view, trigger, policy,
// owned sequence, …) keeps the slow way, `copyIn`: DELETE the live rows and INSERT … SELECT the
// shadow's, row by row (same guarantees, its time grows with the rows).
import type { Knex } from 'knex';
import { columnsOf, shadowIndexes, type Shadow } from './shadow.ts';
import { ident } from '../infra/sql-ident.ts';

type Db = Knex | Knex.Transaction;

const qualified = (schema: string, table: string) => `${ident(schema)}.${ident(table)}`;
const regclass = `(quote_ident(?) || '.' || quote_ident(?))::regclass`;

/** Why a live table cannot be replaced by moving another in (undefined: it can). */
async function unmovable(knex: Db, schema: string, table: string): Promise<string | undefined> {
  // What depends on the table besides its own row type, toast table, indexes, defaults, checks,
  // keys and (PostgreSQL 18) not-null constraints, all of which the shadow has its own copies of.
  const deps = await knex.raw<{ rows: Array<{ what: string }> }>(
    `SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what
       FROM pg_depend d
     WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = ${regclass}
       AND d.classid NOT IN ('pg_type'::regclass, 'pg_attrdef'::regclass)
       AND NOT (d.classid = 'pg_class'::regclass AND (SELECT relkind FROM pg_class WHERE oid = d.objid) IN ('i', 'I', 't'))
       AND NOT (d.classid = 'pg_constraint'::regclass
                AND EXISTS (SELECT 1 FROM pg_constraint k WHERE k.oid = d.objid AND k.conrelid = d.refobjid AND k.contype IN ('p', 'u', 'c', 'x', 'n')))`,
    [schema, table],
  );
  if (deps.rows.length > 0) return `${deps.rows.map((r) => r.what).join(', ')} depend on it`;
  const attrs = await knex.raw<{ rows: Array<{ odd: boolean }> }>(
    `SELECT c.reltablespace <> 0 OR c.relreplident <> 'd' OR c.relrowsecurity OR c.relforcerowsecurity
            OR (SELECT t.reloptions IS NOT NULL FROM pg_class t WHERE t.oid = c.reltoastrelid)
            OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                         AND (a.attacl IS NOT NULL OR a.attstattarget <> -1)) AS odd
       FROM pg_class c WHERE c.oid = ${regclass}`,
    [schema, table],
  );
  return attrs.rows[0]!.odd ? 'it has a tablespace, replica identity, row security, column grants or statistics targets of its own' : undefined;
}

/**
 * A table's definition as one text: columns (type, not null, default, storage, compression),
 * constraints, indexes (by name), persistence, owner, grants, options and comment. The live table
 * and its shadow copy must give the same text for one to replace the other.
 */
async function shapeOf(knex: Db, schema: string, table: string): Promise<string> {
  const r = await knex.raw<{ rows: Array<{ shape: string }> }>(
    `SELECT concat_ws(' | ',
       (SELECT string_agg(concat_ws(' ', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attstorage,
                                    a.attcompression, pg_get_expr(d.adbin, d.adrelid)), ', ' ORDER BY a.attnum)
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
       (SELECT string_agg(k.conname || ' ' || pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname)
          FROM pg_constraint k WHERE k.conrelid = c.oid),
       (SELECT string_agg(regexp_replace(pg_get_indexdef(i.indexrelid), ' ON .* USING ', ' USING '), ', ' ORDER BY 1)
          FROM pg_index i WHERE i.indrelid = c.oid),
       c.relpersistence, c.relowner::regrole::text, c.relacl::text, c.reloptions::text, obj_description(c.oid, 'pg_class')
     ) AS shape
       FROM pg_class c WHERE c.oid = ${regclass}`,
    [schema, table],
  );
  return r.rows[0]!.shape;
}

/**
 * Before the swap, outside its lock: gives the shadow tables what the live ones have besides their
 * rows (secondary indexes under the live names, owner, grants, options, comment) and planner
 * statistics. False when some live table cannot be replaced that way (the swap copies the rows).
 */
export async function prepareMove(knex: Knex, shadow: Shadow): Promise<boolean> {
  for (const t of shadow.projection.tables) {
    if (await unmovable(knex, shadow.live, t)) return false;
  }
  // The tables side by side, each on a connection of its own.
  await Promise.all(shadow.projection.tables.map(async (t) => {
    const target = qualified(shadow.schema, t);
    for (const statement of await shadowIndexes(knex, shadow.live, shadow.schema, t, 'secondary')) await knex.raw(statement);
    const live = (await knex.raw<{ rows: Array<{ owner: string; mine: string; options: string[] | null; comment: string | null }> }>(
      `SELECT c.relowner::regrole::text AS owner, (SELECT relowner::regrole::text FROM pg_class WHERE oid = ${regclass}) AS mine,
              c.reloptions AS options, obj_description(c.oid, 'pg_class') AS comment
         FROM pg_class c WHERE c.oid = ${regclass}`,
      [shadow.schema, t, shadow.live, t],
    )).rows[0]!;
    if (live.owner !== live.mine) await knex.raw(`ALTER TABLE ${target} OWNER TO ${live.owner}`);
    const grants = await knex.raw<{ rows: Array<{ privilege: string; grantee: string; grantable: boolean }> }>(
      `SELECT a.privilege_type AS privilege, CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END AS grantee,
              a.is_grantable AS grantable
         FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = ${regclass} AND a.grantee <> c.relowner`,
      [shadow.live, t],
    );
    for (const g of grants.rows) await knex.raw(`GRANT ${g.privilege} ON ${target} TO ${g.grantee}${g.grantable ? ' WITH GRANT OPTION' : ''}`);
    if (live.options) {
      const options = live.options.map((o) => { const i = o.indexOf('='); return `${o.slice(0, i)} = '${o.slice(i + 1).replace(/'/g, "''")}'`; });
      await knex.raw(`ALTER TABLE ${target} SET (${options.join(', ')})`);
    }
    if (live.comment !== null) await knex.raw(`COMMENT ON TABLE ${target} IS '${live.comment.replace(/'/g, "''")}'`);
    // The planner's statistics of the new table from its first query on (autovacuum comes later).
    await knex.raw(`ANALYZE ${target}`);
  }));
  return true;
}

/**
 * Under the swap's lock: moves the shadow tables in place of the live ones, if every one still has
 * its live table's shape (a migration may have changed a live table during the rebuild); false,
 * having changed nothing, when one does not.
 */
export async function moveIn(tx: Knex.Transaction, shadow: Shadow): Promise<boolean> {
  const tables = shadow.projection.tables;
  await tx.raw(`LOCK TABLE ${tables.map((t) => qualified(shadow.live, t)).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  for (const t of tables) {
    if (await shapeOf(tx, shadow.live, t) !== await shapeOf(tx, shadow.schema, t)) return false;
  }
  for (const t of tables) {
    await tx.raw(`DROP TABLE ${qualified(shadow.live, t)}`);
    await tx.raw(`ALTER TABLE ${qualified(shadow.schema, t)} SET SCHEMA ${ident(shadow.live)}`);
  }
  return true;
}

/** Under the swap's lock: replaces the live rows with the shadow's (the live tables stay). */
export async function copyIn(tx: Knex.Transaction, shadow: Shadow): Promise<void> {
  for (const table of shadow.projection.tables) {
    const cols = (await columnsOf(tx, shadow.live, table)).map(ident).join(', ');
    await tx.raw(`DELETE FROM ${qualified(shadow.live, table)}`);
    await tx.raw(`INSERT INTO ${qualified(shadow.live, table)} (${cols}) SELECT ${cols} FROM ${qualified(shadow.schema, table)}`);
  }
}
