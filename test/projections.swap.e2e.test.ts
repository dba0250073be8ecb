// The swap at the end of an online rebuild (projections/swap.ts): the rebuilt tables are moved in
// place of the live ones and keep everything the live ones had (indexes under their names,
// constraints, compression, logged, grants), readers never see an empty table meanwhile, and tables
// a move would not carry over (here: a view depends on one) get their rows copied instead.
import { createHash } from 'node:crypto';
import t from 'tap';
import pg from 'pg';
import type { Knex } from 'knex';
import { newCustomer, settledPayins, topUp } from './helpers/money.ts';
import { startTestApp } from './helpers/app.ts';
import { moneyProjection } from '../projections/money.ts';
import { rebuildProjection } from '../projections/rebuild.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;
const tables = moneyProjection.tables;
/** Whether this server was built with lz4 (migration 012 uses it where it can). */
const lz4 = ((await s.knex.raw<{ rows: Array<{ enumvals: string[] }> }>(`SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'`)).rows[0]?.enumvals ?? []).includes('lz4');

const m = await h.newMerchant('Swap');
await topUp(h, m, 'XAF', '100000');
const payer = await newCustomer(h, m);
await settledPayins(h, m, payer);
await s.awaitReadModels(await s.store.head());
await s.projector.stop();

async function rowsHash(knex: Knex, table: string): Promise<string> {
  const rows = (await knex(table).select('*')) as Array<Record<string, unknown>>;
  return createHash('sha256').update(rows.map((r) => JSON.stringify(r)).sort().join('\n')).digest('hex');
}

interface Definition {
  oid: number;
  shape: {
    indexes: unknown[];
    constraints: unknown[];
    columns: Array<{ attname: string; attcompression: string }>;
    relation: Array<{ relpersistence: string; acl: string | null }>;
  };
}

/** What a live table is besides its rows, and its identity (a moved-in table is another relation). */
async function definition(knex: Knex, table: string): Promise<Definition> {
  const one = async <T>(sql: string) => (await knex.raw<{ rows: T[] }>(sql, [table])).rows;
  return {
    oid: (await one<{ oid: number }>(`SELECT ?::regclass::oid AS oid`))[0]!.oid,
    shape: {
      indexes: await one(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? ORDER BY indexname`),
      constraints: await one(`SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = ?::regclass ORDER BY conname`),
      columns: await one<{ attname: string; attcompression: string }>(`SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull, attstorage, attcompression
                            FROM pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`),
      relation: await one<{ relpersistence: string; acl: string | null }>(`SELECT relpersistence, relacl::text AS acl FROM pg_class WHERE oid = ?::regclass`),
    },
  };
}

const snapshot = async () => {
  const out: Record<string, Definition & { rows: string }> = {};
  for (const table of tables) out[table] = { ...(await definition(s.knex, table)), rows: await rowsHash(s.knex, table) };
  return out;
};

t.test('the rebuilt tables are moved in with the live tables\' indexes, constraints, compression, persistence and grants', async (t) => {
  await s.knex.raw('GRANT SELECT ON payins TO PUBLIC');
  const before = await snapshot();
  t.match(before.payins!.shape.relation[0]!.acl, /=r\//, 'the grant is there');
  t.ok(before.ledger_entries!.shape.indexes.length >= 3, 'ledger_entries has secondary indexes');
  await rebuildProjection(s.knex, s.store, moneyProjection, undefined, 7);
  const after = await snapshot();
  for (const table of tables) {
    t.not(after[table]!.oid, before[table]!.oid, `${table}: another relation (moved in, not copied into)`);
    t.same(after[table]!.shape, before[table]!.shape, `${table}: same indexes, constraints, columns, persistence, grants`);
    t.equal(after[table]!.rows, before[table]!.rows, `${table}: same rows`);
    t.equal(after[table]!.shape.relation[0]!.relpersistence, 'p', `${table}: logged`);
  }
  const body = (d: Definition) => d.shape.columns.find((c) => c.attname === 'body')!.attcompression;
  t.equal(body(after.payins!), body(before.payins!), 'body keeps its compression (lz4 where the server has it)');
  if (lz4) t.equal(body(after.payins!), 'l', 'lz4 on this server');
  const schemas = await s.knex.raw<{ rows: unknown[] }>(`SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'rebuild\\_%'`);
  t.equal(schemas.rows.length, 0, 'no shadow schema left behind');
});

t.test('a view on a live table: the rows are copied into the live tables instead, the view keeps working', async (t) => {
  await s.knex.raw('CREATE VIEW payin_ids AS SELECT id FROM payins');
  t.teardown(() => s.knex.raw('DROP VIEW IF EXISTS payin_ids'));
  const before = await snapshot();
  await rebuildProjection(s.knex, s.store, moneyProjection);
  const after = await snapshot();
  t.equal(after.payins!.oid, before.payins!.oid, 'payins is the same relation');
  for (const table of tables) t.equal(after[table]!.rows, before[table]!.rows, `${table}: same rows`);
  const viewed = await s.knex.raw<{ rows: unknown[] }>('SELECT id FROM payin_ids');
  t.equal(viewed.rows.length, 2, 'the view reads the rebuilt rows');
});

t.test('readers during a rebuild always see every row (old ones until the swap, new ones after)', async (t) => {
  const reader = new pg.Client({ connectionString: s.config.databaseUrl! });
  await reader.connect();
  t.teardown(() => reader.end());
  const expected = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, Number((await s.knex(table).count({ n: '*' }))[0]!.n)])));
  let done = false;
  const counts: Array<Record<string, number>> = [];
  const reading = (async () => {
    while (!done) {
      const r = await reader.query(`SELECT ${tables.map((table) => `(SELECT count(*) FROM ${table})::int AS ${table}`).join(', ')}`);
      counts.push(r.rows[0]);
    }
  })();
  await rebuildProjection(s.knex, s.store, moneyProjection, undefined, 3).finally(() => { done = true; });
  await reading;
  t.ok(counts.length > 5, `${counts.length} reads during the rebuild`);
  t.ok(counts.every((c) => tables.every((table) => c[table] === expected[table])), 'every read saw every row');
});
