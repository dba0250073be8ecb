// Jobs scheduled outside a transaction within one turn go as one INSERT, with the meaning of the
// calls one after another: a repeated key keeps its first job, or with `replace` takes the last.
import t, { type Test } from 'tap';
import pino from 'pino';
import { Scheduler } from '../infra/scheduler.ts';
import { ManualClock } from '../infra/clock.ts';
import { testDatabase } from './helpers/db.ts';

const log = pino({ level: 'silent' });

/** A scheduler on a fresh database, with every `INSERT INTO jobs` it sends (its bindings). */
async function schedulerWatchingInserts(t: Test) {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const clock = new ManualClock(new Date('2026-11-24T20:00:00.000Z'));
  const s = new Scheduler(knex, clock, log);
  const inserts: unknown[][] = [];
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => { if (/^INSERT INTO jobs/.test(q.sql.trim())) inserts.push(q.bindings ?? []); };
  knex.on('query', onQuery);
  t.teardown(() => { knex.off('query', onQuery); });
  return { knex, clock, s, inserts };
}

t.test('scheduled together: one INSERT; first wins, or last with replace; a transaction\'s job is its own', async (t) => {
  const { knex, clock, s, inserts } = await schedulerWatchingInserts(t);
  const at = (s: number) => new Date(clock.now().getTime() + s * 1000);
  await Promise.all([
    s.schedule('k', 'a', { n: 1 }, at(10)),
    s.schedule('k', 'b', { n: 2 }, at(20)),
    s.schedule('k', 'a', { n: 3 }, at(30)), // exists (the first call): left alone
    s.schedule('other', 'a', { n: 4 }, at(40)),
  ]);
  t.equal(inserts.length, 1, 'one INSERT for four calls');
  inserts.length = 0;
  await Promise.all([
    s.schedule('k', 'b', { n: 5 }, at(50), { replace: true }),
    s.schedule('k', 'b', { n: 6 }, at(60), { replace: true }),
    s.schedule('k', 'c', { n: 7 }, at(70), { replace: true }),
  ]);
  t.equal(inserts.length, 1, 'one INSERT for three replacing calls');
  await knex.transaction((tx) => s.schedule('k', 'd', { n: 8 }, at(80), { tx }));
  const rows = await knex('jobs').orderBy(['kind', 'key']).select('kind', 'key', 'payload', 'due_at');
  t.same(rows.map((r: { kind: string; key: string; payload: { n: number }; due_at: Date | string }) =>
    [r.kind, r.key, r.payload.n, new Date(r.due_at).toISOString()]), [
    ['k', 'a', 1, at(10).toISOString()],
    ['k', 'b', 6, at(60).toISOString()],
    ['k', 'c', 7, at(70).toISOString()],
    ['k', 'd', 8, at(80).toISOString()],
    ['other', 'a', 4, at(40).toISOString()],
  ]);
});

t.test('jobs go as one JSON document: payloads with quotes, backslashes and any character kept, a null payload as JSON null; a payload changed after scheduling is not', async (t) => {
  const { knex, clock, s, inserts: bindings } = await schedulerWatchingInserts(t);
  const payloads = [
    { reference: 'a "quoted" \\ reference', nested: { z: [1, null, 'é 🇸🇳'], a: 'line\nbreak' } },
    { plain: true },
    null,
  ];
  const mutated = { n: 1 };
  const due = new Date('2026-11-24T20:00:10.123Z');
  await Promise.all([
    s.schedule('k', 'key "with" quotes \\', payloads[0], due),
    s.schedule('k', 'plain', payloads[1], due, { replace: true }),
    s.schedule('k', 'null', payloads[2], due),
    (async () => { const p = s.schedule('k', 'mutated', mutated, due); mutated.n = 2; await p; })(),
  ]);
  t.same(bindings.map((b) => b.length), [1, 1], 'each INSERT (plain, replacing) carries its jobs as one parameter');
  const nullPayload = await knex.raw<{ rows: Array<{ t: string }> }>(`SELECT jsonb_typeof(payload) AS t FROM jobs WHERE key = 'null'`);
  t.same(nullPayload.rows, [{ t: 'null' }], 'a null payload is stored as JSON null, as before (the column is NOT NULL)');
  const rows = await knex('jobs').orderBy('key').select('key', 'payload', 'due_at', 'created_at');
  t.same(rows.map((r: { key: string; payload: unknown; due_at: Date | string; created_at: Date | string }) =>
    [r.key, r.payload, new Date(r.due_at).toISOString(), new Date(r.created_at).toISOString()]), [
    ['key "with" quotes \\', payloads[0], due.toISOString(), clock.now().toISOString()],
    ['mutated', { n: 1 }, due.toISOString(), clock.now().toISOString()],
    ['null', null, due.toISOString(), clock.now().toISOString()],
    ['plain', payloads[1], due.toISOString(), clock.now().toISOString()],
  ]);
});
