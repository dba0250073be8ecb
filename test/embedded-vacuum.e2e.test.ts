// Autovacuum's work done by the service (workers/embedded-vacuum.ts, infra/vacuum-need.ts), on
// PostgreSQL's own rules, only while the server's autovacuum is off (as on this project's test and
// bench server; the embedded server runs its own).
import t from 'tap';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { testDatabase } from './helpers/db.ts';
import { tablesNeedingWork, type AutovacuumSettings, type TableStats } from '../infra/vacuum-need.ts';
import { EMBEDDED_VACUUM_JOB, VACUUM_EVERY_MS, runTableWork, serverAutovacuum, vacuumRound } from '../workers/embedded-vacuum.ts';
import { ManualClock } from '../infra/clock.ts';
import { startTestApp } from './helpers/app.ts';
import { until } from './helpers/money.ts';

// PostgreSQL 15's defaults.
const defaults: AutovacuumSettings = {
  vacuumThreshold: 50, vacuumScaleFactor: 0.2, insertThreshold: 1000, insertScaleFactor: 0.2,
  analyzeThreshold: 50, analyzeScaleFactor: 0.1, freezeMaxAge: 200_000_000, multixactFreezeMaxAge: 400_000_000,
};
// PostgreSQL publishes a session's row counts at most once a second, when it next goes idle (or up
// to 10 s later): the writes run in one transaction whose session is told to publish them as it
// goes idle after the commit (pg_stat_force_next_flush, PostgreSQL 15), before the commit is answered.
const publishing = (k: Knex, writes: (tx: Knex.Transaction) => Promise<unknown>) => k.transaction(async (tx) => {
  await writes(tx);
  await tx.raw('SELECT pg_stat_force_next_flush()');
});
const table = (over: Partial<TableStats>): TableStats => ({
  schema: 'public', table: 'keys', reltuples: 10_000, deadRows: 0, insertedSinceVacuum: 0,
  modifiedSinceAnalyze: 0, xidAge: 1_000, multixactAge: 1, ...over,
});

t.test('the rules: autovacuum thresholds, base plus a share of the rows', async (t) => {
  t.same(tablesNeedingWork([table({})], defaults), [], 'a quiet table: nothing');
  t.same(tablesNeedingWork([table({ deadRows: 2_050 })], defaults), [], 'dead rows at the threshold (50 + 20% of 10,000): not yet');
  t.same(tablesNeedingWork([table({ deadRows: 2_051 })], defaults),
    [{ schema: 'public', table: 'keys', vacuum: true, analyze: false, reason: 'dead rows' }]);
  t.same(tablesNeedingWork([table({ insertedSinceVacuum: 3_001, modifiedSinceAnalyze: 3_001 })], defaults),
    [{ schema: 'public', table: 'keys', vacuum: true, analyze: true, reason: 'inserts' }], 'an insert-only table is vacuumed (and analysed)');
  t.same(tablesNeedingWork([table({ insertedSinceVacuum: 3_001 })], { ...defaults, insertThreshold: -1 }), [], 'insert vacuum disabled by -1');
  t.same(tablesNeedingWork([table({ modifiedSinceAnalyze: 1_051 })], defaults),
    [{ schema: 'public', table: 'keys', vacuum: false, analyze: true, reason: 'statistics' }], 'statistics alone: ANALYZE');
  t.same(tablesNeedingWork([table({ reltuples: -1, deadRows: 51 })], defaults).map((w) => w.reason), ['dead rows'], 'never counted: as empty');
});

t.test('the rules: a table near transaction-id wraparound is vacuumed first, whatever its changes', async (t) => {
  const work = tablesNeedingWork([
    table({ table: 'busy', deadRows: 1_000_000 }),
    table({ table: 'old', xidAge: 200_000_001 }),
    table({ table: 'old-multixact', multixactAge: 400_000_001 }),
  ], defaults);
  t.same(work.map((w) => [w.table, w.reason, w.vacuum]), [['old', 'wraparound', true], ['old-multixact', 'wraparound', true], ['busy', 'dead rows', true]]);
});

t.test('a round vacuums the table with dead rows, and only what needs it', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const k = tdb.db.knex;
  const stats = async (name: string) => (await k.raw<{ rows: Array<{ n_dead_tup: string; last_vacuum: Date | null }> }>(
    'SELECT n_dead_tup, last_vacuum FROM pg_stat_user_tables WHERE relname = ?', [name])).rows[0]!;
  // The server's own autovacuum (on, on the embedded server) must not race the round for these tables.
  await k.raw('CREATE TABLE churn (id int PRIMARY KEY, v text) WITH (autovacuum_enabled = false)');
  await k.raw(`INSERT INTO churn SELECT g, 'x' FROM generate_series(1, 2000) g`);
  await publishing(k, async (tx) => {
    for (let i = 0; i < 3; i++) await tx.raw(`UPDATE churn SET v = v || 'y'`);
  });
  t.ok(Number((await stats('churn')).n_dead_tup) > 1000, 'three updates of 2,000 rows: dead rows (some pruned on the way)');
  await vacuumRound(k); // and everything migrations left behind
  t.equal(Number((await stats('churn')).n_dead_tup), 0, 'the dead rows reclaimed');
  t.ok((await stats('churn')).last_vacuum, 'churn vacuumed');

  await k.raw('CREATE TABLE quiet (id int PRIMARY KEY) WITH (autovacuum_enabled = false)');
  await publishing(k, async (tx) => {
    await tx.raw(`UPDATE churn SET v = 'z' WHERE id <= 10`); // 10 dead rows: under the threshold
    await tx.raw(`DELETE FROM churn WHERE id > 1500`); // 500 dead rows: over it
    await tx.raw('INSERT INTO quiet VALUES (1)');
  });
  const done = await vacuumRound(k);
  t.same(done.map((w) => [w.table, w.reason]), [['churn', 'dead rows']], 'only the table over its threshold');
  t.same(await vacuumRound(k), [], 'then nothing left to do');
  // A rebuild's shadow table or schema dropped between the statistics and the statement: skipped.
  t.equal(await runTableWork(k, { schema: 'public', table: 'dropped', vacuum: true, analyze: true, reason: 'dead rows' }), false);
  t.equal(await runTableWork(k, { schema: 'shadow_gone', table: 'payins', vacuum: false, analyze: true, reason: 'statistics' }), false);
  t.equal(await runTableWork(k, { schema: 'public', table: 'quiet', vacuum: false, analyze: true, reason: 'statistics' }), true);
});

t.test('the service runs the round every 15 seconds on its clock where it vacuums itself, logging it at debug', async (t) => {
  const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
  let logText = '';
  const logStream = new Writable({ write(chunk, _enc, cb) { logText += chunk.toString(); cb(); } });
  const h = await startTestApp({ clock, logStream, env: { LOG_LEVEL: 'debug' } });
  t.teardown(() => h.stop());
  const s = h.app.services;
  const job = () => s.knex('jobs').where({ kind: EMBEDDED_VACUUM_JOB }).first();
  const itself = !(await serverAutovacuum(s.knex));
  t.comment(`the server's autovacuum ${itself ? 'off' : 'on'}: the service vacuums ${itself ? 'itself' : 'nothing'}`);
  await s.knex.raw('CREATE TABLE churn (id int PRIMARY KEY) WITH (autovacuum_enabled = false)');
  await s.knex.raw('INSERT INTO churn SELECT generate_series(1, 500)');
  await publishing(s.knex, (tx) => tx.raw('DELETE FROM churn'));
  await until('the dead rows counted', async () => Number((await s.knex.raw<{ rows: Array<{ n: string }> }>(
    `SELECT n_dead_tup AS n FROM pg_stat_user_tables WHERE relname = 'churn'`)).rows[0]?.n ?? 0) >= 500);
  const t0 = clock.now().getTime();
  t.equal(new Date((await job()).due_at).getTime(), t0 + VACUUM_EVERY_MS, 'first round one period after start');
  clock.advance(VACUUM_EVERY_MS);
  await until('the round ran and set the next', async () => {
    const j = await job();
    return j && j.locked_until === null && new Date(j.due_at).getTime() === t0 + 2 * VACUUM_EVERY_MS;
  });
  const churn = await s.knex.raw<{ rows: Array<{ n_dead_tup: string; last_vacuum: Date | null }> }>(
    `SELECT n_dead_tup, last_vacuum FROM pg_stat_user_tables WHERE relname = 'churn'`);
  if (!itself) {
    t.notOk(churn.rows[0]!.last_vacuum, "the round left the table to the server's autovacuum");
    return;
  }
  t.ok(churn.rows[0]!.last_vacuum, 'the table with 500 dead rows vacuumed');
  t.equal(Number(churn.rows[0]!.n_dead_tup), 0);
  const lines = logText.split('\n').filter((l) => l.includes('tables vacuumed')).map((l) => JSON.parse(l));
  t.ok(lines.some((l) => l.tables.includes('public.churn (dead rows)')), 'the round is logged');
  t.ok(lines.every((l) => l.level === 20), 'at debug (20), not info: routine housekeeping');
});
