// A worker that runs in one process at a time among all those on one database (infra/session-lease.ts):
// each process tries to take the lease, the holder runs the worker, the others try again every
// LEASE_RETRY_MS and take over when the holder stops, dies or loses its database session.
//
// A holder that cannot do the work (`healthy` answering false for `unhealthyForMs`: the event
// forwarder's bus unreachable from its host) steps aside for STEP_ASIDE_RETRIES tries, so that
// another process takes the lease: when every process forwarded, one that had lost its bus was not
// missed.
import type { Services } from '../commands/services.ts';
import { LeaseSession, type Lease, type LeaseTimings } from '../infra/session-lease.ts';
import type { Worker } from './worker.ts';

/** How often a process without the lease tries to take it: the longest pause when a holder goes. */
export const LEASE_RETRY_MS = 1_000;
/** Tries a holder that stepped aside lets pass, so that another process takes the lease first. */
const STEP_ASIDE_RETRIES = 5;

export interface LeasedOptions {
  retryMs?: number;
  timings?: LeaseTimings;
  /** Whether this process can do the worker's work now; asked every retryMs while it holds the lease. */
  healthy?: (s: Services) => Promise<boolean>;
  /** How long `healthy` answers false before the holder steps aside. */
  unhealthyForMs?: number;
}

interface Held { lease: Lease; stopWorker: () => Promise<void>; health: NodeJS.Timeout | undefined }

class LeasedRun {
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> = Promise.resolve();
  private held: Held | undefined;
  private readonly retryMs: number;

  constructor(private readonly s: Services, private readonly worker: Worker, private readonly session: LeaseSession,
    private readonly opts: LeasedOptions) {
    this.retryMs = opts.retryMs ?? LEASE_RETRY_MS;
  }

  /** Whether this process holds the lease and runs the worker. */
  get running(): boolean {
    return this.held !== undefined;
  }

  /** One try now; the next ones are scheduled while the lease is not held. */
  tryNow(): Promise<void> {
    this.attempt = this.attempt.then(() => this.take());
    return this.attempt;
  }

  private later(delayMs = this.retryMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tryNow(), delayMs);
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
    let stopWorker: () => Promise<void>;
    try {
      stopWorker = await this.worker.start(this.s);
    } catch (err) {
      this.s.log.error({ err, worker: this.worker.name }, 'leased worker failed to start; trying again');
      await lease.release();
      return this.later();
    }
    const held: Held = { lease, stopWorker, health: undefined };
    held.health = this.watchHealth(held);
    this.held = held;
    void lease.lost.then(() => this.letGo(held, 'lost the lease (its database session ended or stopped answering)', this.retryMs));
  }

  /** While `held` is: steps aside once `healthy` has answered false for unhealthyForMs. */
  private watchHealth(held: Held): NodeJS.Timeout | undefined {
    const { healthy, unhealthyForMs = 10_000 } = this.opts;
    if (!healthy) return undefined;
    let failingSince: number | undefined;
    const timer = setInterval(() => {
      void healthy(this.s).catch(() => false).then((ok) => {
        failingSince = ok ? undefined : failingSince ?? Date.now();
        // An answer that comes after this lease was let go is about it, not a newer one (letGo checks).
        if (failingSince !== undefined && Date.now() - failingSince >= unhealthyForMs) {
          void this.letGo(held, 'cannot do its work from here: stepping aside for another process', this.retryMs * STEP_ASIDE_RETRIES);
        }
      });
    }, this.retryMs);
    timer.unref();
    return timer;
  }

  /** Stops the worker, ends the session (the lease goes to another), and tries again after `pauseMs`. */
  private async letGo(held: Held, why: string, pauseMs: number): Promise<void> {
    if (this.stopped || this.held !== held) return;
    this.held = undefined;
    clearInterval(held.health);
    this.s.log.warn({ worker: this.worker.name }, `${why}: stopping, then trying to take the lease again`);
    this.attempt = this.attempt
      .then(() => held.stopWorker())
      .catch((err) => this.s.log.error({ err }, 'leased worker failed to stop'))
      .then(() => this.session.close());
    await this.attempt;
    this.later(pauseMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // Not holding it: a try waiting on its session ends with the session.
    if (!this.held) await this.session.close();
    await this.attempt;
    const held = this.held;
    this.held = undefined;
    if (held) clearInterval(held.health);
    try {
      if (held) await held.stopWorker();
    } finally {
      await this.session.close();
    }
  }
}

/** Per running service (tests run several in one process): each leased worker's "does this process run it". */
const runningHere = new WeakMap<Services, Map<string, () => boolean>>();

/** Each leased worker this service started, and whether it runs it now (/metrics). */
export function leasedWorkersOf(s: Services): Array<{ worker: string; running: boolean }> {
  return [...(runningHere.get(s) ?? new Map<string, () => boolean>())].map(([worker, running]) => ({ worker, running: running() }));
}

function report(s: Services, worker: string, running: () => boolean): void {
  const byWorker = runningHere.get(s) ?? new Map<string, () => boolean>();
  byWorker.set(worker, running);
  runningHere.set(s, byWorker);
}

/**
 * The worker, run only while this process holds the lease `key` (a fixed number, one per worker).
 * Its start returns after the first try: the lease taken and the worker started, or left to the
 * tries that follow. With the embedded database, the worker simply runs.
 */
export function leased(worker: Worker, key: number, opts: LeasedOptions = {}): Worker {
  return {
    name: worker.name,
    ...(worker.consumes ? { consumes: worker.consumes } : {}),
    async start(s: Services) {
      // The embedded server serves one process (its data directory is locked): no one to share the
      // work with, and a connection of its own is a backend's memory on the service's machine.
      if (!s.config.databaseUrl) {
        const stop = await worker.start(s);
        let running = true;
        report(s, worker.name, () => running);
        return async () => { running = false; await stop(); };
      }
      const run = new LeasedRun(s, worker, new LeaseSession(s.db.url, key, opts.timings), opts);
      report(s, worker.name, () => run.running);
      await run.tryNow();
      return () => run.stop();
    },
  };
}
