// The durable job scheduler: idempotent scheduling, due times, retries, replace, crash takeover.
import t from 'tap';
import pino from 'pino';
import { Scheduler, type Job } from '../src/infra/scheduler.ts';
import { ManualClock } from '../src/infra/clock.ts';
import { testDatabase } from './helpers/db.ts';

const log = pino({ level: 'silent' });
const until = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

t.test('runs a due job once; scheduling the same key twice is one job', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const clock = new ManualClock();
  const s = new Scheduler(tdb.db.knex, clock, log);
  const runs: Job[] = [];
  s.register('k', async (job) => { runs.push(job); });
  s.start();
  t.teardown(() => s.stop());
  await s.schedule('k', 'a', { n: 1 }, clock.now());
  await s.schedule('k', 'a', { n: 2 }, clock.now());
  await until(() => runs.length === 1);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(runs.length, 1);
  t.same(runs[0]!.payload, { n: 1 });
  const left = await tdb.db.knex('jobs').count<{ count: string }[]>('* as count');
  t.equal(Number(left[0]!.count), 0, 'a finished job is removed');
});

t.test('a future job waits for its time; retryAt reschedules; a throw retries with backoff', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const clock = new ManualClock();
  const s = new Scheduler(tdb.db.knex, clock, log);
  const attempts: number[] = [];
  s.register('k', async (job) => {
    attempts.push(job.attempts);
    if (job.attempts === 1) return { retryAt: new Date(clock.now().getTime() + 60_000) };
    if (job.attempts === 2) throw new Error('boom');
  }, { errorBackoffMs: () => 1000 });
  s.start();
  t.teardown(() => s.stop());
  await s.schedule('k', 'x', {}, new Date(clock.now().getTime() + 10_000));
  await new Promise((r) => setTimeout(r, 400));
  t.same(attempts, [], 'not before its due time');
  clock.advance(10_000);
  await until(() => attempts.length === 1);
  await new Promise((r) => setTimeout(r, 400));
  t.same(attempts, [1], 'retryAt is honoured');
  clock.advance(60_000);
  await until(() => attempts.length === 2);
  clock.advance(1000);
  await until(() => attempts.length === 3);
  t.same(attempts, [1, 2, 3]);
  const row = await tdb.db.knex('jobs').where({ kind: 'k', key: 'x' }).first();
  t.notOk(row, 'done after the third run');
});

t.test('a job whose process died is taken over after its lease', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const clock = new ManualClock();
  const dead = new Scheduler(tdb.db.knex, clock, log);
  let started = 0;
  dead.register('k', async () => {
    started++;
    await new Promise(() => undefined); // hangs for ever: the process "died" mid-run
  }, { leaseMs: 5000 });
  dead.start();
  await dead.schedule('k', 'j', {}, clock.now());
  await until(() => started === 1);
  void dead.stop();
  const alive = new Scheduler(tdb.db.knex, clock, log);
  const runs: number[] = [];
  alive.register('k', async (job) => { runs.push(job.attempts); }, { leaseMs: 5000 });
  alive.start();
  t.teardown(() => alive.stop());
  await new Promise((r) => setTimeout(r, 400));
  t.same(runs, [], 'not while the lease holds');
  clock.advance(5001);
  await until(() => runs.length === 1);
  t.same(runs, [2], 'taken over, second attempt');
});

t.test('replace moves a pending job', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const clock = new ManualClock();
  const s = new Scheduler(tdb.db.knex, clock, log);
  const seen: unknown[] = [];
  s.register('k', async (job) => { seen.push(job.payload); });
  s.start();
  t.teardown(() => s.stop());
  await s.schedule('k', 'r', { v: 1 }, new Date(clock.now().getTime() + 100_000));
  await s.schedule('k', 'r', { v: 2 }, clock.now(), { replace: true });
  await until(() => seen.length === 1);
  t.same(seen, [{ v: 2 }]);
});
