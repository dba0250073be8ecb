// Idempotency keys are kept 24 hours (CONTRACT.md §6). An expired key is already free for a new
// request (commands/idempotency.ts); this job deletes the expired rows so the table does not grow
// for ever. One durable job on the scheduler, re-run every PURGE_EVERY_MS of the service's clock:
// with several worker processes it runs in one of them at a time, and it survives restarts.
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';

export const IDEMPOTENCY_PURGE_JOB = 'idempotency-purge';
export const IDEMPOTENCY_PURGE_KEY = 'expired';
export const PURGE_EVERY_MS = 60 * 60 * 1000;
/** Rows deleted per statement (short transactions); a run repeats until the backlog is gone. */
const BATCH = 10_000;

export async function purgeExpiredKeys(s: Services): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await s.idempotency.purgeExpired(BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

export const idempotencyPurge: Worker = {
  name: IDEMPOTENCY_PURGE_JOB,
  async start(s: Services) {
    s.scheduler.register(IDEMPOTENCY_PURGE_JOB, async () => {
      // The next run an hour after this one started: a clock that moved while it ran (a test's
      // manual clock) must not push the next run past keys that expired meanwhile.
      const started = s.clock.now();
      const purged = await purgeExpiredKeys(s);
      // Routine housekeeping: at debug, so a terminal at info shows what a person acts on.
      if (purged > 0) s.log.debug({ purged }, 'expired idempotency keys purged');
      return { retryAt: new Date(started.getTime() + PURGE_EVERY_MS) };
    }, { concurrency: 1 });
    // Kept if already there (another process, an earlier run): one job, rescheduled by each run.
    await s.scheduler.schedule(IDEMPOTENCY_PURGE_JOB, IDEMPOTENCY_PURGE_KEY, {}, s.clock.now());
    return async () => undefined;
  },
};
