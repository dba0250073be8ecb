// Every parameterised query on PostgreSQL runs as a prepared statement of its connection (parsed
// once, then only bound and executed), within a bound per connection, and a statement whose
// result shape changed under it is prepared again.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../infra/db.ts';
import { MAX_PREPARED } from '../infra/prepared-statements.ts';
import { freshDatabaseUrl } from './helpers/db.ts';

const fresh = await freshDatabaseUrl();
t.teardown(() => fresh.drop());
const url = fresh.url;
{
  // One connection, so every query below runs on the same session.
  const db = await openDatabase({ databaseUrl: url, poolMax: 1 });
  t.teardown(() => db.close());
  const prepared = async () => (await db.knex.raw<{ rows: Array<{ statement: string }> }>(
    'SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement);

  t.test('a parameterised query is prepared once and reused', async (t) => {
    const text = `SELECT ?::int + 1 AS x /* ${randomBytes(4).toString('hex')} */`;
    t.same((await db.knex.raw(text, [1])).rows, [{ x: 2 }]);
    t.same((await db.knex.raw(text, [41])).rows, [{ x: 42 }], 'the second call binds new values');
    const mine = (await prepared()).filter((s) => s.includes(text.slice(text.indexOf('/*'))));
    t.equal(mine.length, 1, 'one prepared statement for the text, on this connection');
    t.match(mine[0], /\$1::int \+ 1/);
    const builder = await db.knex.select(db.knex.raw('?::text AS v', ['a']));
    t.same(builder, [{ v: 'a' }], 'query-builder queries too');
  });

  t.test(`at most ${MAX_PREPARED} texts per connection; the rest run unnamed`, async (t) => {
    const tag = randomBytes(4).toString('hex');
    for (let i = 0; i < MAX_PREPARED + 20; i++) {
      t.equal(Number((await db.knex.raw(`SELECT ?::int AS n /* ${tag} ${i} */`, [i])).rows[0].n), i);
    }
    const all = await prepared();
    t.ok(all.length <= MAX_PREPARED, `${all.length} prepared statements on the connection`);
    t.ok(all.filter((s) => s.includes(tag)).length < MAX_PREPARED + 20, 'the texts past the bound were not prepared');
  });

  t.test('a statement whose result shape changed is prepared again after one failure', async (t) => {
    const table = `prep_${randomBytes(4).toString('hex')}`;
    await db.knex.raw(`CREATE TABLE ${table} (a int)`);
    t.teardown(() => db.knex.raw(`DROP TABLE IF EXISTS ${table}`));
    await db.knex.raw(`INSERT INTO ${table} VALUES (1)`);
    const select = `SELECT * FROM ${table} WHERE a = ?`;
    t.same((await db.knex.raw(select, [1])).rows, [{ a: 1 }]);
    await db.knex.raw(`ALTER TABLE ${table} ADD COLUMN b int DEFAULT 7`);
    const first = await db.knex.raw(select, [1]).then(
      (r) => ({ rows: r.rows as unknown[] }),
      (err: Error) => ({ error: err.message }),
    );
    if ('error' in first) t.match(first.error, /cached plan must not change result type/, 'the one failure');
    else t.same(first.rows, [{ a: 1, b: 7 }], 'the server re-planned it by itself');
    t.same((await db.knex.raw(select, [1])).rows, [{ a: 1, b: 7 }], 'then it answers with the new shape');
  });
}
