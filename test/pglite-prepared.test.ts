// PGlite runs each parameterised text as a prepared statement (infra/pglite-prepared.ts): parsed
// once, then bound and executed in one exchange, with the same answers and errors as PGlite's own
// `query`, within a bound, and prepared again when its result shape changed under it.
import t from 'tap';
import { PGlite, protocol, parse } from '@electric-sql/pglite';
import { randomUUID } from 'node:crypto';
import { preparePglite } from '../src/infra/pglite-prepared.ts';
import { openDatabase } from '../src/infra/db.ts';

const lib = { serialize: protocol.serialize, parseResults: parse.parseResults };

async function pair() {
  const plain = await PGlite.create();
  const prepared = preparePglite(await PGlite.create(), lib, 8);
  for (const db of [plain, prepared]) {
    await db.query(`CREATE TABLE t (id uuid PRIMARY KEY, n bigint, at timestamptz, doc jsonb, tags text[], note text)`);
  }
  return { plain, prepared, close: () => Promise.all([plain.close(), prepared.close()]) };
}

const names = async (db: PGlite) =>
  (await db.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name')).rows;

t.test('answers as PGlite does, and parses each text once', async (t) => {
  const { plain, prepared, close } = await pair();
  t.teardown(close);
  const insert = 'INSERT INTO t (id, n, at, doc, tags, note) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *';
  const select = 'SELECT id, n, at, doc, tags, note FROM t WHERE n >= $1 ORDER BY n';
  const update = 'UPDATE t SET note = $1 WHERE n < $2';
  for (let i = 0; i < 3; i++) {
    const params = [randomUUID(), 10n ** 15n + BigInt(i), new Date(1_700_000_000_000 + i), { a: [i, 'é'], b: null }, ['x', `y${i}`, 'with "quote"'], i === 1 ? null : `n${i}`];
    const [a, b] = [await plain.query(insert, params), await prepared.query(insert, params)];
    t.same(b.rows, a.rows, `insert ${i}: the same rows`);
    t.same(b.fields, a.fields, `insert ${i}: the same fields`);
    t.equal(b.affectedRows, a.affectedRows);
  }
  const [s1, s2] = [await plain.query(select, [0]), await prepared.query(select, [0])];
  t.same(s2.rows, s1.rows, 'a select reads the same values back (bigint, timestamptz, jsonb, text[], null)');
  t.equal(s2.rows.length, 3);
  const [u1, u2] = [await plain.query(update, ['changed', 10n ** 15n + 2n]), await prepared.query(update, ['changed', 10n ** 15n + 2n])];
  t.equal(u2.affectedRows, u1.affectedRows, 'the rows an update changed');
  t.equal(u2.affectedRows, 2);
  t.same(u2.rows, [], 'no rows from a statement that returns none');
  const mine = await names(prepared);
  t.same(mine.map((s) => s.statement).sort(), [insert, select, update].sort(), 'one prepared statement per text');
  t.same(await names(plain), [], 'PGlite alone prepares nothing');
});

t.test('errors are the database errors PGlite gives, and the session goes on', async (t) => {
  const { prepared, close } = await pair();
  t.teardown(close);
  const id = randomUUID();
  const insert = 'INSERT INTO t (id, n) VALUES ($1, $2)';
  await prepared.query(insert, [id, 1]);
  const dup = await prepared.query(insert, [id, 2]).then(() => undefined, (e: unknown) => e as { code?: string; query?: string; params?: unknown[] });
  t.equal(dup?.code, '23505', 'a unique violation keeps its SQLSTATE');
  t.equal(dup?.query, insert, 'the error names its statement, as PGlite does');
  t.same(dup?.params, [id, 2]);
  const bad = await prepared.query('SELEKT $1', [1]).then(() => undefined, (e: unknown) => e as { code?: string });
  t.equal(bad?.code, '42601', 'a syntax error');
  t.notOk((await names(prepared)).some((s) => s.statement === 'SELEKT $1'), 'a text that did not parse is not kept');
  await prepared.query(insert, [randomUUID(), 3]);
  t.equal((await prepared.query<{ c: number }>('SELECT count(*)::int AS c FROM t', [])).rows[0]!.c, 2, 'later statements run');
});

t.test('calls of a new text at once prepare it once', async (t) => {
  const { prepared, close } = await pair();
  t.teardown(close);
  const text = 'SELECT $1::int * 2 AS x';
  const out = await Promise.all(Array.from({ length: 20 }, (_, i) => prepared.query<{ x: number }>(text, [i])));
  t.same(out.map((r) => r.rows[0]!.x), Array.from({ length: 20 }, (_, i) => i * 2));
  t.equal((await names(prepared)).filter((s) => s.statement === text).length, 1);
});

t.test('at most the bound of texts are named, however many arrive together; the rest run unnamed', async (t) => {
  const { prepared, close } = await pair();
  t.teardown(close);
  for (let i = 0; i < 4; i++) t.equal((await prepared.query<{ n: number }>(`SELECT $1::int AS n /* ${i} */`, [i])).rows[0]!.n, i);
  const together = await Promise.all(Array.from({ length: 16 }, (_, j) => prepared.query<{ n: number; s: string }>(`SELECT $1::int AS n, $2::text AS s /* ${j + 4} */`, [j + 4, `s${j}`])));
  t.same(together.map((r) => r.rows[0]), Array.from({ length: 16 }, (_, j) => ({ n: j + 4, s: `s${j}` })), 'each answered with its own values');
  t.equal((await names(prepared)).length, 8, 'the bound (8 in this test)');
  t.same((await prepared.query<{ n: number; s: string }>('SELECT $1::int AS n, $2::text AS s /* 19 */', [7, 'again'])).rows, [{ n: 7, s: 'again' }], 'a text past the bound runs again, unnamed');
  t.equal((await names(prepared)).length, 8);
});

t.test('a statement whose result shape changed is prepared again after one failure', async (t) => {
  const { prepared, close } = await pair();
  t.teardown(close);
  await prepared.query('CREATE TABLE shape (a int)');
  await prepared.query('INSERT INTO shape VALUES (1)');
  const select = 'SELECT * FROM shape WHERE a = $1';
  t.same((await prepared.query(select, [1])).rows, [{ a: 1 }]);
  await prepared.query('ALTER TABLE shape ADD COLUMN b int DEFAULT 7');
  const first = await prepared.query(select, [1]).then((r) => ({ rows: r.rows }), (err: Error) => ({ error: err.message }));
  if ('error' in first) t.match(first.error, /cached plan must not change result type/, 'the one failure');
  else t.same(first.rows, [{ a: 1, b: 7 }], 'the backend re-planned it by itself');
  t.same((await prepared.query(select, [1])).rows, [{ a: 1, b: 7 }], 'then it answers with the new shape');
});

t.test("the service's embedded database: knex's transactions commit and roll back through it", async (t) => {
  const db = await openDatabase({});
  t.teardown(() => db.close());
  await db.knex.raw('CREATE TABLE tx (id int PRIMARY KEY)');
  await db.knex.transaction(async (tx) => {
    await tx.raw('INSERT INTO tx VALUES (?)', [1]);
  });
  const failed = await db.knex.transaction(async (tx) => {
    await tx.raw('INSERT INTO tx VALUES (?)', [2]);
    await tx.raw('INSERT INTO tx VALUES (?)', [1]); // duplicate: the transaction fails
  }).then(() => 'committed', (e: { code?: string }) => e.code);
  t.equal(failed, '23505');
  t.same((await db.knex('tx').select('id').orderBy('id')).map((r: { id: number }) => r.id), [1], 'the failed transaction left nothing');
  const texts = (await db.knex.raw<{ rows: Array<{ statement: string }> }>('SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement);
  t.ok(texts.includes('INSERT INTO tx VALUES ($1)'), 'its statements were prepared');
});

t.test("the service's embedded database plans each call for its tables as they are now", async (t) => {
  // PGlite runs no autovacuum: a generic plan kept from when a table was empty would stay as it grew.
  const db = await openDatabase({});
  t.teardown(() => db.close());
  const pglite = (db.knex.client as unknown as { config: { connection: { pglite: PGlite } } }).config.connection.pglite;
  await db.knex.raw('CREATE TABLE kv (m uuid, k text, v text, PRIMARY KEY (m, k))');
  const m = randomUUID();
  const keys = (from: number) => Array.from({ length: 20 }, (_, j) => `k${from + j}`);
  const update = 'UPDATE kv SET v = x.v FROM unnest(?::uuid[], ?::text[], ?::text[]) AS x(m, k, v) WHERE kv.m = x.m AND kv.k = x.k';
  for (let i = 0; i < 10; i++) await db.knex.raw(update, [keys(0).map(() => m), keys(0), keys(0).map(() => 'v')]); // on an empty table
  await db.knex.raw(`INSERT INTO kv SELECT ?, 'k' || g, 'v' FROM generate_series(1, 20000) g`, [m]);
  const name = (await pglite.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE statement LIKE 'UPDATE kv %'")).rows[0]!.name;
  const list = (xs: string[]) => `'{${xs.join(',')}}'`;
  const plan = (await pglite.exec(`EXPLAIN EXECUTE ${name}(${list(keys(0).map(() => m))}, ${list(keys(0))}, ${list(keys(0).map(() => 'w'))})`))[0]!
    .rows.map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n');
  t.match(plan, /Index Scan using kv_pkey/, 'the 20 keys found through the primary key');
  t.notMatch(plan, /Seq Scan on kv/, 'not a scan of the 20,000 rows kept from when the table was empty');
});
