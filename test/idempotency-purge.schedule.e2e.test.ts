// The idempotency-purge job runs again an hour after each run started (workers/idempotency-purge.ts):
// a clock that moved while a run went on must not push the next run past keys that expired meanwhile
// (with a test's manual clock, a run that read the time before the clock moved and rescheduled after
// it skipped an hour, and api.idempotency.more timed out under CI load). Its line is routine
// housekeeping: at debug, never at info (issue 31).
import t from 'tap';
import { Writable } from 'node:stream';
import { startTestApp } from './helpers/app.ts';
import { until } from './helpers/money.ts';
import { ManualClock } from '../infra/clock.ts';
import { IDEMPOTENCY_TTL_MS } from '../commands/idempotency.ts';
import { IDEMPOTENCY_PURGE_JOB, IDEMPOTENCY_PURGE_KEY, PURGE_EVERY_MS } from '../workers/idempotency-purge.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
let logText = '';
const logStream = new Writable({ write(chunk, _enc, cb) { logText += chunk.toString(); cb(); } });
const h = await startTestApp({ clock, logStream, env: { LOG_LEVEL: 'debug' } });
t.teardown(() => h.stop());
const s = h.app.services;

t.test('a key that expires while a run goes on is purged by the next run, an hour after that one started', async (t) => {
  const t0 = clock.now().getTime();
  await until('the first run', async () => {
    const job = await s.knex('jobs').where({ kind: IDEMPOTENCY_PURGE_JOB, key: IDEMPOTENCY_PURGE_KEY }).first();
    return job && job.locked_until === null && new Date(job.due_at).getTime() === t0 + PURGE_EVERY_MS;
  });
  const m = await h.newMerchant('Purge schedule');
  t.equal((await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: 'k1' })).status, 201);
  const keys = async () => (await s.knex('idempotency_keys').where({ merchant_id: m.merchantId }).select('key')).length;
  t.equal(await keys(), 1);
  // The run at 23 h takes (on the service's clock) two hours: the key expires at 24 h, during it.
  const purge = s.idempotency.purgeExpired.bind(s.idempotency);
  let slow = true;
  s.idempotency.purgeExpired = async (limit?: number) => {
    const n = await purge(limit);
    if (slow) {
      slow = false;
      clock.advance(2 * PURGE_EVERY_MS);
    }
    return n;
  };
  t.teardown(() => { s.idempotency.purgeExpired = purge; });
  clock.advance(IDEMPOTENCY_TTL_MS - PURGE_EVERY_MS);
  await until('the expired key purged by the next run', async () => (await keys()) === 0);
  t.notOk(slow, 'the slow run happened');
  t.equal(await keys(), 0, 'purged with the clock at 25 h, not left until 26 h');
  const lines = logText.split('\n').filter((l) => l.includes('expired idempotency keys purged')).map((l) => JSON.parse(l));
  t.ok(lines.length > 0, 'the purge is logged');
  t.ok(lines.every((l) => l.level === 20), 'at debug (20), not info: routine housekeeping');
});
