// Migration 012 (bench issue 8): the read models' large jsonb columns are compressed with lz4
// where the server offers it (PostgreSQL here), and left alone where it does not (PGlite). Migration
// 015 dropped the event lists, so the bodies are what is left.
import t from 'tap';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('payment bodies use lz4 when the server has it', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const offered = (await knex.raw<{ rows: Array<{ enumvals: string[] }> }>(
    `SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'`)).rows[0]!.enumvals;
  const cols = (await knex.raw<{ rows: Array<{ col: string; method: string }> }>(
    `SELECT c.relname || '.' || a.attname AS col, a.attcompression::text AS method
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relname IN ('quotes', 'payins', 'payouts', 'transfers') AND a.attname IN ('body', 'events')
       AND c.relnamespace = current_schema()::regnamespace ORDER BY 1`)).rows;
  t.equal(cols.length, 4, 'four columns: the bodies (no event lists since 015)');
  const expected = offered.includes('lz4') ? 'l' : ''; // '' = the server default (pglz)
  t.same(cols.filter((c) => c.method !== expected), [], `every column: ${expected || 'default'} (server offers ${offered.join(', ')})`);
  // The rows themselves read back as written, whatever the compression.
  const body = { note: 'x'.repeat(5000) };
  await knex.raw(`INSERT INTO quotes (id, merchant_id, flow_type, status, expires_at, created_at, version, body)
    VALUES (gen_random_uuid(), gen_random_uuid(), 'payin', 'active', now(), now(), 1, ?::jsonb)`, [JSON.stringify(body)]);
  t.same((await knex('quotes').first('body')).body, body);
});
