// The periodic poll, idle: one statement looks for due jobs of every kind, and only a kind that has
// one claims (issue 44: a claim per kind every interval was most of what an idle service sent). A
// job no wake-up announced (written by another process, or by a database function) is still run.
import t from 'tap';
import pino from 'pino';
import { Scheduler } from '../infra/scheduler.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

const log = pino({ level: 'silent' });
const KINDS = ['a', 'b', 'c', 'd', 'e', 'f'];

t.test('six idle kinds: one look for due jobs per interval, no claim; a job written behind its back runs', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const s = new Scheduler(knex, systemClock, log);
  const ran: string[] = [];
  for (const kind of KINDS) s.register(kind, async (job) => { ran.push(`${kind}/${job.key}`); });
  const statements: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/\bjobs\b/.test(q.sql)) statements.push(q.sql.trim().split(/\s+/).slice(0, 2).join(' ')); };
  knex.on('query', onQuery);
  t.teardown(() => { knex.off('query', onQuery); });
  s.start();
  t.teardown(() => s.stop());
  await s.polled(); // the start's claims (one per kind) are over
  statements.length = 0;
  const started = performance.now();
  await new Promise((r) => setTimeout(r, 1300));
  const elapsed = performance.now() - started;
  const claims = statements.filter((x) => x === 'UPDATE jobs').length;
  const looks = statements.filter((x) => x === 'SELECT k').length;
  t.equal(claims, 0, 'no claim while nothing is due');
  t.ok(looks >= 1 && looks <= Math.ceil(elapsed / 250) + 1, `${looks} looks in ${Math.round(elapsed)} ms, one statement each for the ${KINDS.length} kinds`);
  t.equal(statements.length, looks, 'nothing else');
  // Another process's job (no wake-up here): the periodic poll finds it.
  await knex('jobs').insert({ kind: 'd', key: 'k1', payload: JSON.stringify({}), due_at: new Date(), created_at: new Date() });
  await waitUntil('the job written behind the scheduler\'s back run', () => ran.includes('d/k1'));
  t.same(ran, ['d/k1'], 'run by its kind, once');
});
