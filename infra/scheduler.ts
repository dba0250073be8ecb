// Durable timers in the database: a job is (kind, key) → payload, due at a time. Workers in any
// process claim due jobs with FOR UPDATE SKIP LOCKED under a lease, so each runs in one place at a
// time, survives restarts, and is retried if its process dies mid-run (the lease expires).
// Scheduling is idempotent by (kind, key).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import { StatementBatcher } from './statement-batcher.ts';

export interface Job<P = any> {
  kind: string;
  key: string;
  payload: P;
  /** 1 on the first run. */
  attempts: number;
  dueAt: Date;
}

/** Done (the job is deleted), or run again later. */
export type JobOutcome = void | { retryAt: Date };

export interface JobKindOptions {
  concurrency?: number;
  /** How long one run may take before another process may take the job over. */
  leaseMs?: number;
  /** Delay before retrying a run that threw, by attempt. */
  errorBackoffMs?: (attempts: number) => number;
}

interface Kind {
  name: string;
  handler: (job: Job) => Promise<JobOutcome>;
  concurrency: number;
  leaseMs: number;
  errorBackoffMs: (attempts: number) => number;
  running: number;
  timer: NodeJS.Timeout | undefined;
  nextWake: number;
  /** The last claim took as many jobs as there were free slots: more may be due, waiting for one. */
  saturated: boolean;
  /** A poll (its claim) is under way: at most one per kind at a time. */
  polling: boolean;
  /** A wake came while a poll was under way: poll again as soon as it ends. */
  pollAgain: boolean;
}

/** `payload` is JSON text, serialised when the job was scheduled (a caller may reuse its object after). */
interface NewJob { kind: string; key: string; payload: string | undefined; dueAt: Date; createdAt: Date }

/**
 * Inserts jobs; an existing (kind, key) is left alone, or with `replace` moved to the new time and
 * payload. The jobs travel as one JSON document: as a `jsonb[]` of payload texts, node-postgres
 * copied each payload twice more to escape it for the array literal (PROFILE §32). A payload goes in
 * it as a string (its JSON text), cast back to `jsonb` as before: PostgreSQL's JSON parser then
 * never decodes the payload's own strings here, and a `null` payload stays jsonb `null`, not SQL NULL.
 */
async function insertJobs(q: Knex | Knex.Transaction, jobs: NewJob[], replace: boolean): Promise<void> {
  // A (kind, key) twice in one statement: the later call's job, as if it had run after the other.
  const unique = [...new Map(jobs.map((j) => [`${j.kind}\u0000${j.key}`, j])).values()];
  const rows = replace ? unique : jobs;
  const conflict = replace
    ? 'DO UPDATE SET payload = excluded.payload, due_at = excluded.due_at, attempts = 0, locked_until = NULL, lease_id = NULL'
    : 'DO NOTHING';
  await q.raw(
    `INSERT INTO jobs (kind, key, payload, due_at, created_at)
     SELECT x.kind, x.key, x.payload::jsonb, x.due_at, x.created_at
       FROM json_to_recordset(?::json) AS x(kind text, key text, payload text, due_at timestamptz, created_at timestamptz)
     ON CONFLICT (kind, key) ${conflict}`,
    [JSON.stringify(rows.map((j) => ({ kind: j.kind, key: j.key, payload: j.payload, due_at: j.dueAt, created_at: j.createdAt })))],
  );
}

/**
 * How often the periodic poll looks for due jobs that no wake-up announced (another process's, a
 * lease that expired, a due time reached). It is one statement for every kind (dueKinds), then a
 * claim for each kind that has one: idle, a claim per kind every interval was most of what an idle
 * service sent (24 statements a second, issue 44).
 */
const POLL_MS = 250;
/**
 * Finished runs are removed together over this window (bench issue 8: one DELETE per payin's
 * settlement check, as checks finish a few milliseconds apart; 0.43 per payin over 10 ms, 0.19 over
 * 25). Nothing waits on the removal: the run's lease keeps the job from running again meanwhile.
 */
const FINISHED_WINDOW_MS = 25;
const MAX_CLAIM = 100;

interface Row { kind: string; key: string; payload: unknown; attempts: number; due_at: Date | string }
/** A job row as a claim answers it, under the claim's lease (also as a database function leases it: Scheduler.adopt). */
export type LeasedJob = Row & { lease_id: string };

export class Scheduler {
  private kinds = new Map<string, Kind>();
  private started = false;
  /** Callers of polled(), by kind, waiting for its next poll. */
  private pollWaiters = new Map<string, Array<() => void>>();
  private stopped = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  /** The finished runs' removals among them (stop() sends them once the runs are over). */
  private readonly removals = new Set<Promise<void>>();
  /** Finished runs removed together (one DELETE for the jobs that finish in one event-loop turn). */
  private readonly finished: StatementBatcher<{ kind: string; key: string; leaseId: string }, void>;

  /**
   * Jobs scheduled outside a transaction within one turn of the event loop: one INSERT per kind of
   * conflict (bench issue 8: a payin's settlement check was a statement of its own).
   */
  private readonly adding = new StatementBatcher<NewJob, void>(async (jobs) => { await insertJobs(this.knex, jobs, false); return jobs.map(() => undefined); });
  private readonly replacing = new StatementBatcher<NewJob, void>(async (jobs) => { await insertJobs(this.knex, jobs, true); return jobs.map(() => undefined); });

  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Defaults for kinds that do not set their own, and the finished runs' removal window (FINISHED_WINDOW_MS). */
    private readonly defaults: Pick<JobKindOptions, 'leaseMs'> & { finishedWindowMs?: number } = {},
  ) {
    this.finished = new StatementBatcher<{ kind: string; key: string; leaseId: string }, void>(async (runs) => {
      // Only each run's own lease: a replace() during the run scheduled a new one.
      await this.knex.raw(
        'DELETE FROM jobs WHERE (kind, key, lease_id) IN (SELECT * FROM unnest(?::text[], ?::text[], ?::uuid[]))',
        [runs.map((r) => r.kind), runs.map((r) => r.key), runs.map((r) => r.leaseId)],
      );
      return runs.map(() => undefined);
    }, 256, defaults.finishedWindowMs ?? FINISHED_WINDOW_MS);
  }

  register(name: string, handler: (job: Job) => Promise<JobOutcome>, opts: JobKindOptions = {}): void {
    if (this.kinds.has(name)) throw new Error(`job kind ${name} registered twice`);
    this.kinds.set(name, {
      name, handler, concurrency: opts.concurrency ?? 8, leaseMs: opts.leaseMs ?? this.defaults.leaseMs ?? 60_000,
      errorBackoffMs: opts.errorBackoffMs ?? ((n) => Math.min(300_000, 1000 * 2 ** Math.min(n, 8))),
      running: 0, timer: undefined, nextWake: 0, saturated: false, polling: false, pollAgain: false,
    });
    if (this.started) this.wake(name, 0);
  }

  /**
   * Schedules (kind, key) at dueAt. If it already exists it is left alone, unless `replace`, which
   * moves it to the new time and payload. Pass a transaction to schedule atomically with other writes.
   */
  async schedule(kind: string, key: string, payload: unknown, dueAt: Date, opts: { replace?: boolean; tx?: Knex | Knex.Transaction } = {}): Promise<void> {
    const job: NewJob = { kind, key, payload: JSON.stringify(payload), dueAt, createdAt: this.clock.now() };
    if (opts.tx) await insertJobs(opts.tx, [job], opts.replace === true);
    else await (opts.replace ? this.replacing : this.adding).submit(job);
    if (!this.started || !this.kinds.has(kind)) return;
    const wakeNow = () => this.wake(kind, dueAt.getTime() - this.clock.now().getTime());
    // Scheduled inside a transaction: a poll now would not see the job yet (and then sleep a whole
    // poll interval), so wake once the transaction has committed.
    const tx = opts.tx as Knex.Transaction | undefined;
    if (tx?.isTransaction && tx.executionPromise) void tx.executionPromise.then(wakeNow, () => undefined);
    else wakeNow();
  }

  /** Jobs of `kind` were scheduled outside schedule() (by a database function): poll for them now. */
  nudge(kind: string): void {
    if (this.started && this.kinds.has(kind)) this.wake(kind, 0);
  }

  /**
   * A lease for jobs that a database function makes and claims for this process in the same
   * transaction (migration 035): the claim's lease id and expiry, and how many of the kind's slots
   * are free here (the function leases at most that many; 0 when none is, or before start()).
   */
  leaseFor(kind: string): { leaseId: string; lockedUntil: Date; limit: number } {
    const k = this.kinds.get(kind);
    const free = k && this.started && !this.stopped ? Math.max(0, k.concurrency - k.running) : 0;
    return { leaseId: randomUUID(), lockedUntil: new Date(this.clock.now().getTime() + (k?.leaseMs ?? 0)), limit: Math.min(free, MAX_CLAIM) };
  }

  /**
   * Runs jobs leased to this process by a database function (leaseFor), as if a claim had taken them:
   * each in a free slot of its kind at once; any over the free slots (or after stop()) given back.
   */
  adopt(kind: string, rows: LeasedJob[]): void {
    const k = this.kinds.get(kind);
    const free = k && !this.stopped ? Math.max(0, k.concurrency - k.running) : 0;
    for (const row of rows.slice(0, free)) this.run(k!, row);
    if (rows.length > free) this.track(this.release(rows.slice(free)));
  }

  async cancel(kind: string, key: string): Promise<void> {
    await this.knex.raw('DELETE FROM jobs WHERE kind = ? AND key = ?', [kind, key]);
  }

  start(): void {
    this.started = true;
    for (const k of this.kinds.keys()) this.wake(k, 0);
    this.scheduleSweep();
  }

  private scheduleSweep(): void {
    if (this.stopped) return;
    this.sweepTimer = setTimeout(() => this.track(this.sweep()), POLL_MS);
  }

  /** The periodic poll: the kinds with a free slot that have a due job, found in one statement, each woken. */
  private async sweep(): Promise<void> {
    try {
      const open = [...this.kinds.values()].filter((k) => k.running < k.concurrency).map((k) => k.name);
      if (open.length > 0) for (const name of await this.dueKinds(open)) this.wake(name, 0);
    } catch (err) {
      this.log.error({ err }, 'looking for due jobs failed');
    } finally {
      this.scheduleSweep();
    }
  }

  private async dueKinds(names: string[]): Promise<string[]> {
    const now = this.clock.now();
    const r = await this.knex.raw<{ rows: Array<{ kind: string }> }>(
      `SELECT k AS kind FROM unnest(?::text[]) AS k
       WHERE EXISTS (SELECT 1 FROM jobs WHERE kind = k AND due_at <= ? AND (locked_until IS NULL OR locked_until < ?))`,
      [names, now, now],
    );
    return r.rows.map((x) => x.kind);
  }

  /**
   * Polls every kind now, and resolves once each of those polls has claimed and started what was
   * due by the clock: a caller that moved a manual clock waits on this instead of sleeping past the
   * poll interval (tests; the answer holds for this process's polls only).
   */
  async polled(): Promise<void> {
    await Promise.all([...this.kinds.keys()].map((name) => new Promise<void>((resolve) => {
      if (this.stopped) return resolve();
      this.pollWaiters.set(name, [...(this.pollWaiters.get(name) ?? []), resolve]);
      this.wake(name, 0);
    })));
  }

  /** Runs the kind's poll after `inMs` (sooner wakes win; one further away than the periodic poll is left to it). */
  private wake(name: string, inMs: number): void {
    const k = this.kinds.get(name)!;
    if (this.stopped || inMs > POLL_MS) return;
    const delay = Math.max(0, inMs);
    const at = Date.now() + delay;
    if (k.timer && k.nextWake <= at) return;
    if (k.timer) clearTimeout(k.timer);
    k.nextWake = at;
    k.timer = setTimeout(() => {
      k.timer = undefined;
      // One claim at a time per kind: jobs scheduled while one is on its way (each wakes the kind)
      // are taken by a single claim once it returns, not by a claim each (under load those claims
      // were about one per payin, most of them taking one job).
      if (k.polling) k.pollAgain = true;
      else this.track(this.poll(k));
    }, delay);
  }

  private async poll(k: Kind): Promise<void> {
    // Those who asked before this poll began are answered when it has started its claims.
    const waiters = this.pollWaiters.get(k.name) ?? [];
    this.pollWaiters.delete(k.name);
    k.polling = true;
    try {
      await this.claimAndRun(k);
    } finally {
      k.polling = false;
      for (const w of waiters) w();
      if (k.pollAgain) {
        k.pollAgain = false;
        this.wake(k.name, 0);
      }
    }
  }

  private async claimAndRun(k: Kind): Promise<void> {
    if (this.stopped) return;
    const free = k.concurrency - k.running;
    let claimed: LeasedJob[] = [];
    if (free > 0) {
      try {
        claimed = await this.claim(k, Math.min(free, MAX_CLAIM));
      } catch (err) {
        this.log.error({ err, kind: k.name }, 'job claim failed');
      }
    }
    if (this.stopped) {
      // stop() came while the claim was on its way: give the jobs back rather than start them after
      // stop() (a run started then would fetch or write behind a stopped service's back).
      await this.release(claimed);
      return;
    }
    for (const row of claimed) this.run(k, row);
    // More may be due right away if we filled our slots; otherwise the periodic poll looks again.
    k.saturated = claimed.length > 0 && claimed.length === free;
    if (k.saturated) this.wake(k.name, 20);
  }

  private async claim(k: Kind, limit: number): Promise<LeasedJob[]> {
    const now = this.clock.now();
    const leaseId = randomUUID();
    const r = await this.knex.raw<{ rows: LeasedJob[] }>(
      `UPDATE jobs SET locked_until = ?, lease_id = ?, attempts = attempts + 1
       WHERE (kind, key) IN (
         SELECT kind, key FROM jobs
         WHERE kind = ? AND due_at <= ? AND (locked_until IS NULL OR locked_until < ?)
         ORDER BY due_at LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING kind, key, payload, attempts, due_at, lease_id`,
      [new Date(now.getTime() + k.leaseMs), leaseId, k.name, now, now, limit],
    );
    return r.rows;
  }

  /** Ends our leases on jobs we claimed but will not run: due again at once, for any process. */
  private async release(rows: LeasedJob[]): Promise<void> {
    if (rows.length === 0) return;
    await this.knex.raw(
      'UPDATE jobs SET locked_until = NULL, lease_id = NULL, attempts = attempts - 1 WHERE (kind, key, lease_id) IN (SELECT * FROM unnest(?::text[], ?::text[], ?::uuid[]))',
      [rows.map((r) => r.kind), rows.map((r) => r.key), rows.map((r) => r.lease_id)],
    ).catch((err: unknown) => this.log.warn({ err }, 'giving back unstarted jobs failed; their lease will expire'));
  }

  /** stop() waits for every poll and run under way. */
  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private run(k: Kind, row: LeasedJob): void {
    k.running++;
    const job: Job = { kind: row.kind, key: row.key, payload: row.payload, attempts: row.attempts, dueAt: new Date(row.due_at) };
    const p = (async () => {
      try {
        const outcome = await k.handler(job);
        if (outcome && outcome.retryAt) {
          await this.knex.raw(
            'UPDATE jobs SET due_at = ?, locked_until = NULL, lease_id = NULL WHERE kind = ? AND key = ? AND lease_id = ?',
            [outcome.retryAt, row.kind, row.key, row.lease_id],
          );
          this.wake(k.name, outcome.retryAt.getTime() - this.clock.now().getTime());
        } else {
          // Not awaited: the slot is free now, and the run's lease keeps the job from being claimed
          // again before its row goes (if the removal fails, the job runs again once the lease
          // expires: every job is idempotent). stop() waits for it.
          const removal = this.finished.submit({ kind: row.kind, key: row.key, leaseId: row.lease_id }).catch((err: unknown) => {
            this.log.warn({ err, kind: k.name, key: row.key }, 'removing a finished job failed; it runs again after its lease');
          });
          this.removals.add(removal);
          void removal.finally(() => this.removals.delete(removal));
          this.track(removal);
        }
      } catch (err) {
        this.log.warn({ err, kind: k.name, key: row.key, attempts: row.attempts }, 'job failed; will retry');
        const retryAt = new Date(this.clock.now().getTime() + k.errorBackoffMs(row.attempts));
        await this.knex.raw(
          'UPDATE jobs SET due_at = ?, locked_until = NULL, lease_id = NULL, last_error = ? WHERE kind = ? AND key = ? AND lease_id = ?',
          [retryAt, String((err as Error)?.message ?? err).slice(0, 500), row.kind, row.key, row.lease_id],
        ).catch(() => undefined);
      } finally {
        k.running--;
        // A slot is free: claim at once only if jobs may be waiting for one (not after every run:
        // that was an empty claim per job; due jobs are found by their own wake-ups and the poll).
        if (k.saturated) this.wake(k.name, 0);
      }
    })();
    this.track(p);
  }

  /** Stops claiming; waits for running jobs to finish (unfinished ones are retried after their lease). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    for (const k of this.kinds.values()) if (k.timer) clearTimeout(k.timer);
    for (const waiters of this.pollWaiters.values()) for (const w of waiters) w(); // no poll will come
    this.pollWaiters.clear();
    // Until none is left: the runs and polls under way first (a run may still start its job's
    // removal), then the removals they gathered, sent at once rather than at their window's end.
    while (this.inFlight.size > 0) {
      const pending = [...this.inFlight];
      await Promise.allSettled(pending.filter((p) => !this.removals.has(p)));
      this.finished.flushNow();
      await Promise.allSettled(pending);
    }
  }
}
