// PGlite statements chained in promise callbacks give the event loop a turn (infra/pglite-turns.ts):
// without it, a run of queued statements kept Node from reading requests or writing responses
// until the run ended (bench issue 8: the first requests of a burst waited 2 s).
import t from 'tap';
import { PGlite } from '@electric-sql/pglite';
import { takeTurns } from '../src/infra/pglite-turns.ts';
import { openDatabase } from '../src/infra/db.ts';

/** Runs `n` statements back to back; answers how many had finished when an immediate set before them ran. */
async function finishedBeforeATurn(query: (sql: string) => Promise<unknown>, n: number): Promise<{ before: number; total: number }> {
  let done = 0;
  let before = -1;
  setImmediate(() => { before = done; });
  for (let i = 0; i < n; i++) {
    await query('SELECT 1');
    done++;
  }
  await new Promise((r) => setImmediate(r));
  return { before, total: done };
}

const N = 1000;

t.test('a bare PGlite keeps the event loop for the whole run (what takeTurns is for)', async (t) => {
  const db = await PGlite.create();
  t.teardown(() => db.close());
  const r = await finishedBeforeATurn((sql) => db.query(sql), N);
  t.equal(r.before, N, 'the immediate ran only after every statement');
});

t.test('with takeTurns the loop gets a turn within the run', async (t) => {
  const db = takeTurns(await PGlite.create(), 1);
  t.teardown(() => db.close());
  const r = await finishedBeforeATurn((sql) => db.query(sql), N);
  t.ok(r.before >= 0 && r.before < N, `the immediate ran after ${r.before} of ${N} statements`);
  t.equal(r.total, N, 'every statement ran');
});

t.test("the service's embedded database takes turns", async (t) => {
  const db = await openDatabase({});
  t.teardown(() => db.close());
  let done = 0;
  let before = -1;
  setImmediate(() => { before = done; });
  for (let i = 0; i < N; i++) {
    await db.knex.raw('SELECT 1');
    done++;
  }
  t.ok(before >= 0 && before < N, `the immediate ran after ${before} of ${N} statements through knex`);
});
