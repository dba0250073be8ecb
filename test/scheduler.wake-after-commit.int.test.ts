// A job scheduled inside a transaction runs as soon as that transaction commits (bench issue 8):
// waking the poller at schedule time found nothing (the row was not committed yet) and the job then
// waited a whole poll interval, at every hop of a payment's webhook chain.
import t from 'tap';
import pino from 'pino';
import { Scheduler } from '../infra/scheduler.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

const log = pino({ level: 'silent' });

t.test('scheduled in a transaction: run right after the commit, not a poll interval later', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const s = new Scheduler(tdb.db.knex, systemClock, log);
  const ran: number[] = [];
  s.register('k', async () => { ran.push(performance.now()); });
  s.start();
  t.teardown(() => s.stop());
  await s.polled(); // the start-up poll is over: the next is ~250 ms away

  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    let committedAt = 0;
    await tdb.db.knex.transaction(async (tx) => {
      await s.schedule('k', `in-tx-${i}`, {}, systemClock.now(), { tx });
      await new Promise((r) => setTimeout(r, 30)); // the poller, woken now, would find nothing
      committedAt = performance.now();
    });
    await waitUntil(`job ${i} to run`, () => ran.length > i);
    t.equal(ran.length, i + 1, `job ${i} ran`);
    samples.push(ran[i]! - committedAt);
    await new Promise((r) => setTimeout(r, 300));
  }
  samples.sort((a, b) => a - b);
  // Woken before the commit, the poll missed the row and the next came a poll interval (250 ms)
  // after that, at least 220 ms after the commit: under that, it was woken by the commit (with room
  // for a loaded machine's slower claim).
  t.ok(samples[1]! < 200, `median ${Math.round(samples[1]!)} ms from commit to run (${samples.map(Math.round).join(', ')})`);
});
