// A worker that runs in one process at a time among all those on one database (infra/session-lease.ts):
// each process tries to take the lease, the holder runs the worker, the others try again every
// LEASE_RETRY_MS and take over when the holder stops, dies or loses its database connection.
import type { Services } from '../commands/services.ts';
import { LeaseSession, type Lease, type LeaseTimings } from '../infra/session-lease.ts';
import type { Worker } from './worker.ts';

/** How often a process without the lease tries to take it: the longest pause when a holder goes. */
export const LEASE_RETRY_MS = 1_000;

class LeasedRun {
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> = Promise.resolve();
  private held: { lease: Lease; stopWorker: () => Promise<void> } | undefined;
  constructor(private readonly s: Services, private readonly worker: Worker, private readonly session: LeaseSession,
    private readonly retryMs: number) {}

  /** One try now; the next ones are scheduled while the lease is not held. */
  tryNow(): Promise<void> {
    this.attempt = this.attempt.then(() => this.take());
    return this.attempt;
  }

  private later(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tryNow(), this.retryMs);
    this.timer.unref();
  }

  private async take(): Promise<void> {
    if (this.stopped || this.held) return;
    let lease: Lease | undefined;
    try {
      lease = await this.session.tryTake();
    } catch (err) {
      this.s.log.warn({ err, worker: this.worker.name }, 'could not ask for the lease; trying again');
    }
    if (!lease) return this.later();
    if (this.stopped) return void (await lease.release());
    try {
      this.held = { lease, stopWorker: await this.worker.start(this.s) };
    } catch (err) {
      this.s.log.error({ err, worker: this.worker.name }, 'leased worker failed to start; trying again');
      await lease.release();
      return this.later();
    }
    void lease.lost.then(() => this.onLost(lease));
  }

  private async onLost(lease: Lease): Promise<void> {
    const held = this.held;
    if (this.stopped || held?.lease !== lease) return;
    this.held = undefined;
    this.s.log.warn({ worker: this.worker.name }, 'lost the lease (its database session ended or stopped answering): stopping, then trying to take it again');
    this.attempt = this.attempt.then(() => held.stopWorker()).catch((err) => this.s.log.error({ err }, 'leased worker failed to stop'));
    await this.attempt;
    this.later();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // Not holding it: a try waiting on its session ends with the session.
    if (!this.held) await this.session.close();
    await this.attempt;
    const held = this.held;
    this.held = undefined;
    try {
      if (held) await held.stopWorker();
    } finally {
      await this.session.close();
    }
  }
}

/**
 * The worker, run only while this process holds the lease `key` (a fixed number, one per worker).
 * Its start returns after the first try: the lease taken and the worker started, or left to the
 * tries that follow.
 */
export function leased(worker: Worker, key: number, opts: { retryMs?: number; timings?: LeaseTimings } = {}): Worker {
  return {
    name: worker.name,
    ...(worker.consumes ? { consumes: worker.consumes } : {}),
    async start(s: Services) {
      const run = new LeasedRun(s, worker, new LeaseSession(s.db.url, key, opts.timings), opts.retryMs ?? LEASE_RETRY_MS);
      await run.tryNow();
      return () => run.stop();
    },
  };
}
