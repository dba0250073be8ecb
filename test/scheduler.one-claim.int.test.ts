// One claim at a time per kind: jobs scheduled while a claim is on its way wake the kind, and the
// wake-ups that come meanwhile end in one claim once it returns (issue 44: under load the claims
// were about one per payin, most taking a single job); no job is left waiting for the next poll.
import t from 'tap';
import pino from 'pino';
import { Scheduler } from '../infra/scheduler.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

const log = pino({ level: 'silent' });
const JOBS = 60;

t.test('jobs scheduled one turn after another: never two claims of a kind at once, each job run once', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const s = new Scheduler(knex, systemClock, log);
  const ran: string[] = [];
  s.register('k', async (job) => { ran.push(job.key); }, { concurrency: JOBS });
  s.register('other', async () => undefined);
  // Claims in flight, by kind, from the statements knex sends and the answers it gets.
  const claimKind = new Map<string, string>();
  let inFlight = 0;
  let mostAtOnce = 0;
  let claims = 0;
  const onQuery = (q: { sql: string; __knexQueryUid: string; bindings?: unknown[] }) => {
    if (!/^UPDATE jobs SET locked_until = (\?|\$1), lease_id/.test(q.sql.trim()) || q.bindings?.[2] !== 'k') return;
    claimKind.set(q.__knexQueryUid, 'k');
    claims++;
    mostAtOnce = Math.max(mostAtOnce, ++inFlight);
  };
  const onAnswer = (_: unknown, q: { __knexQueryUid: string }) => {
    if (claimKind.delete(q.__knexQueryUid)) inFlight--;
  };
  knex.on('query', onQuery).on('query-response', onAnswer).on('query-error', onAnswer);
  t.teardown(() => { knex.off('query', onQuery).off('query-response', onAnswer).off('query-error', onAnswer); });
  s.start();
  t.teardown(() => s.stop());
  await s.polled(); // the start's first polls are over: what follows is the schedules' own wake-ups
  claims = 0;
  const scheduled: Array<Promise<void>> = [];
  for (let i = 0; i < JOBS; i++) {
    scheduled.push(s.schedule('k', `j${i}`, {}, systemClock.now()));
    await new Promise((r) => setImmediate(r)); // each in a turn of its own, as requests come
  }
  await Promise.all(scheduled);
  await waitUntil('every job run', () => ran.length >= JOBS);
  t.equal(mostAtOnce, 1, 'at most one claim of the kind on its way at any time');
  t.comment(`${claims} claims for ${JOBS} jobs`); // 19 here, against 42 with a claim per wake-up
  t.same([...ran].sort(), Array.from({ length: JOBS }, (_, i) => `j${i}`).sort(), 'each job run once');
});
