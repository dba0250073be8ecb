// Finished jobs are removed together over a short window, without holding their run's slot, and
// stop() waits for the removals under way.
import t, { type Test } from 'tap';
import pino from 'pino';
import type { Knex } from 'knex';
import { Scheduler } from '../infra/scheduler.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

const log = pino({ level: 'silent' });

/**
 * Runs `keys` as jobs of one kind, `concurrency` at a time, each lasting `runMs(key)` (0: no wait at
 * all), until all ran and the scheduler stopped. Returns the keys run, the DELETE statements sent and
 * the jobs left.
 */
async function runJobs(t: Test, keys: string[], concurrency: number, runMs: (key: string) => number, opts: { finishedWindowMs?: number; onRun?: (key: string, knex: Knex) => Promise<void> } = {}) {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const s = new Scheduler(knex, systemClock, log, opts.finishedWindowMs === undefined ? {} : { finishedWindowMs: opts.finishedWindowMs });
  const ran: string[] = [];
  s.register('k', async (job) => {
    await opts.onRun?.(job.key, knex);
    ran.push(job.key);
    const ms = runMs(job.key);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
  }, { concurrency });
  const deletes: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/^DELETE FROM jobs/.test(q.sql.trim())) deletes.push(q.sql); };
  knex.on('query', onQuery);
  t.teardown(() => { knex.off('query', onQuery); });
  await Promise.all(keys.map((key) => s.schedule('k', key, {}, systemClock.now())));
  s.start();
  await waitUntil(`every job of ${keys.join(', ')} run`, () => ran.length >= keys.length);
  await s.stop();
  const left = await knex('jobs').count<{ count: string }[]>('* as count');
  return { ran, deletes, left: Number(left[0]!.count) };
}

t.test('jobs run one after another: each starts before the last one\'s removal, all removed by one DELETE; stop() leaves none behind', async (t) => {
  // One at a time: each run waits for the previous one's slot, not for its removal. The window is
  // held open longer than the three runs take on any machine (the service's 25 ms window is the next
  // test's): the three finish inside it however slowly the claims come on a loaded machine.
  const stillThere: Record<string, string[]> = {};
  const { ran, deletes, left } = await runJobs(t, ['a', 'b', 'c'], 1, () => 1, {
    finishedWindowMs: 30_000,
    onRun: async (key, knex) => { stillThere[key] = ((await knex('jobs').orderBy('key').select('key')) as Array<{ key: string }>).map((r) => r.key); },
  });
  t.same([...ran].sort(), ['a', 'b', 'c'], 'every job ran once');
  const [first, second] = [...ran];
  t.ok(stillThere[second!]?.includes(first!), `${second} started while ${first}'s row was still there (its removal waits for the window)`);
  t.equal(deletes.length, 1, 'one DELETE for the three finished jobs');
  t.equal(left, 0, 'stop() waited for the removals');
});

t.test('jobs finishing 15 milliseconds apart still share one DELETE (the window is 25 ms)', async (t) => {
  // Claimed together; a finishes at once, b 15 ms later. Timers fire in the order they are due, so
  // b's end (due at +15 ms) comes before the removal window's end (due at +25 ms) however late both
  // fire on a busy machine; with a 10 ms window they were two DELETEs.
  const { ran, deletes, left } = await runJobs(t, ['a', 'b'], 2, (key) => (key === 'b' ? 15 : 0));
  t.same([...ran].sort(), ['a', 'b']);
  t.equal(deletes.length, 1, 'one DELETE for both');
  t.equal(left, 0);
});
