// stop() while a claim is on its way: the claimed jobs are given back, never started after stop()
// returned. (A KYC review run started that way fetched a document behind the stopped service's back,
// and the next process fetched it again: kyc.restart.e2e.test.ts failed once in CI.)
import t from 'tap';
import pino from 'pino';
import { Scheduler } from '../infra/scheduler.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

const log = pino({ level: 'silent' });

t.test('a claim that returns after stop(): its job does not run, and is free for the next process at once', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const s = new Scheduler(knex, systemClock, log);
  let ran = 0;
  s.register('k', async () => { ran++; }, { leaseMs: 60_000 });
  s.start();
  await s.polled(); // the start-up poll (nothing due) is over

  // Hold the jobs table: the job is written in this transaction, and the claim woken below waits
  // behind it, for the table lock.
  const tx = await knex.transaction();
  await tx.raw('LOCK TABLE jobs IN EXCLUSIVE MODE');
  await tx.raw(`INSERT INTO jobs (kind, key, payload, due_at, created_at) VALUES ('k', 'one', '{}'::jsonb, now() - interval '1 second', now())`);
  s.nudge('k');
  // The poll has begun its claim, and waits for the lock.
  const waiting = async () => Number((await knex.raw(`SELECT count(*) AS n FROM pg_locks WHERE relation = 'jobs'::regclass AND NOT granted`)).rows[0].n);
  await waitUntil('the claim waiting for the table lock', async () => (await waiting()) > 0);
  const stopped = s.stop();
  await tx.commit();
  await stopped;
  // A check that nothing happens after stop(), not a wait for something the scheduler does: nothing
  // of it runs any more (stop() waited for its polls and runs), so a moment is all there is to give.
  await new Promise((r) => setTimeout(r, 200));
  t.equal(ran, 0, 'nothing ran after stop()');
  const row = await knex('jobs').where({ kind: 'k', key: 'one' }).first();
  t.ok(row, 'the job is still there');
  t.equal(row.locked_until, null, 'no lease held: another process may take it now, not a lease later');
  t.equal(row.lease_id, null);
  t.equal(Number(row.attempts), 0, 'the claim that did not run is not counted as an attempt');

  const next = new Scheduler(knex, systemClock, log);
  let nextRan = 0;
  next.register('k', async () => { nextRan++; }, { leaseMs: 60_000 });
  next.start();
  t.teardown(() => next.stop());
  await waitUntil('the next process to run it', () => nextRan > 0);
  t.equal(nextRan, 1, 'the next process runs it');
});
