// Rows new to a rebuild's shadow are written with COPY on PostgreSQL (bench issue 8): every value
// reads back as written, whatever characters it holds, and a duplicate fails rather than overwrites.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { copyRows, copyValue } from '../projections/copy-rows.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { moneyProjection } from '../projections/money.ts';
import { applyBatchToAll } from '../projections/projector.ts';
import { ensureCheckpoints } from '../infra/checkpoints.ts';
import { historyOf } from '../projections/history.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { quoteCreated } from './helpers/quote-events.ts';

t.comment(`on ${dbLabel}`);

t.test('COPY text: NULL, dates, JSON and the characters COPY reads as escapes', async (t) => {
  t.equal(copyValue(null), '\\N');
  t.equal(copyValue(undefined), '\\N');
  t.equal(copyValue(new Date('2026-11-24T10:00:00.000Z')), '2026-11-24T10:00:00.000Z');
  t.equal(copyValue(3), '3');
  t.equal(copyValue({ a: 'x' }), '{"a":"x"}');
  t.equal(copyValue('a\\b\tc\nd\re'), 'a\\\\b\\tc\\nd\\re');
  t.equal(copyValue({ note: 'line\nbreak \\ "quoted"' }), '{"note":"line\\\\nbreak \\\\\\\\ \\\\"quoted\\\\""}', 'JSON escapes are escaped again for COPY');
});

t.test('copied rows read back as written; a duplicate fails', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  await knex.raw('CREATE TABLE copied (id uuid PRIMARY KEY, note text, at timestamptz NOT NULL, n integer, body jsonb NOT NULL)');
  const rows = Array.from({ length: 1_234 }, (_, i) => ({
    id: randomUUID(), note: i % 7 === 0 ? null : `row ${i}\twith\ttabs\nand \\ backslashes ü €`,
    at: new Date(Date.UTC(2026, 10, 24, 0, 0, i)), n: i, body: { i, text: 'quote " backslash \\ newline \n tab \t', list: [1, 'two', null] },
  }));
  await knex.transaction((tx) => copyRows(tx, 'copied', rows));
  const back = await knex('copied').select('*').orderBy('n');
  t.equal(back.length, rows.length, 'every row, in more than one chunk');
  t.same(back.map((r: { id: string; note: string | null; at: Date; n: number; body: unknown }) => ({ ...r, at: r.at.toISOString() })),
    rows.map((r) => ({ ...r, at: r.at.toISOString() })), 'the same values');
  await t.rejects(knex.transaction((tx) => copyRows(tx, 'copied', [rows[0]!])), { code: '23505' }, 'a row already there: the batch fails');
  t.equal((await knex('copied').count({ n: '*' }))[0]!.n, String(rows.length), 'and nothing changed');
});

t.test('a rebuild copies the rows its batches start, and ends with the rows the projector wrote', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const knex = tdb.db.knex;
  await ensureCheckpoints(knex, [moneyProjection.name]);
  const merchant = randomUUID();
  const ids = Array.from({ length: 30 }, () => randomUUID());
  await store.append(ids.map((id) => ({ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, merchant)] })));
  await applyBatchToAll(knex, [moneyProjection], await store.readAll(0n, 1000), historyOf(store));
  const live = await knex('quotes').select('*').orderBy('id');

  const inserts: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/INSERT INTO "quotes"/.test(q.sql)) inserts.push(q.sql); };
  knex.on('query', onQuery);
  await rebuildProjection(knex, store, moneyProjection, undefined, 7); // batches of 7: streams start in each
  knex.removeListener('query', onQuery);
  t.equal(inserts.length, 0, 'no INSERT: copied');
  t.same(await knex('quotes').select('*').orderBy('id'), live, 'the rebuilt rows are the live ones');
});
