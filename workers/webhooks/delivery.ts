// Delivery attempts, run as durable jobs (infra/scheduler.ts), so the retry schedule survives a
// restart and each attempt runs in one process at a time. Job keys: `auto:<event id>` carries the
// retry schedule (one per event); `manual:<event id>:<nonce>` is one redelivery asked for by the
// merchant (an extra attempt now, outside the schedule).
//
// Isolation: the job kind runs many attempts at once, but at most PER_MERCHANT_CONCURRENCY per
// merchant in this process; an attempt over that bound is put back without counting as an attempt
// (and before any database read), so a slow or dead endpoint holds a few slots at most and other
// merchants' deliveries go on. It is put back for about as long as that merchant's attempts have
// lately been taking, so a dead endpoint's backlog waits quietly while a busy but healthy one keeps
// its slots full. A merchant whose attempts are quick has a few over the bound wait in this process
// for the next free slot instead (a burst then costs no put-back, re-claim or timer): never a slow
// or unknown endpoint's, never more than a few, never for long.
import type { Services } from '../../commands/services.ts';
import type { Job, JobOutcome } from '../../infra/scheduler.ts';
import { webhookUrlPolicy } from '../../infra/url-safety.ts';
import { postWebhook, signedHeaders, type AttemptResult } from './sender.ts';
import { recordAttempt } from './store.ts';
import { isFinal, type WebhookEventRow } from '../../projections/webhook-events.ts';
import { JOB_KIND, type DeliveryJob } from '../../commands/webhook-redeliveries.ts';
import { webhookOutcome } from '../../infra/metrics.ts';
import { crashPoint } from '../../infra/crash-points.ts';
import { webhookTargetOf } from './targets.ts';

export const OVERALL_CONCURRENCY = 64;
export const PER_MERCHANT_CONCURRENCY = 4;
/**
 * Shortest put-back of an attempt that found its merchant's slots taken (not an attempt). The
 * put-back is otherwise about one of that merchant's recent attempts: a hanging endpoint's backlog
 * waits seconds, a fast one's a few tens of milliseconds (at 200 ms, a burst to a healthy endpoint
 * answering in 5 ms held its webhooks 40 attempts' time: the transfer-e2e p99 of bench issue 8).
 */
export const BUSY_RETRY_MIN_MS = 25;
/** A merchant's attempts over the bound wait for a slot here only if its attempts take under this. */
export const QUEUE_IF_TYPICAL_UNDER_MS = 100;
/** At most this many attempts of one merchant wait for a slot (each holds one of the job kind's). */
const MAX_WAITING_PER_MERCHANT = PER_MERCHANT_CONCURRENCY;
/** How long an attempt waits for a slot before it is put back after all. */
export const MAX_SLOT_WAIT_MS = 250;
/** Safety net for an event still waiting for its predecessor (normally released at once). */
const WAITING_RECHECK_MS = 30_000;
const DURATIONS_KEPT = 10_000;


interface Waiter {
  resolve: (gotSlot: boolean) => void;
  timer: NodeJS.Timeout;
}

/**
 * Counts in-flight attempts per key and refuses beyond a bound; remembers how long attempts take.
 * A quick key's attempts over the bound may wait for a slot (`acquire`): a release hands its slot
 * straight to the first of them.
 */
export class KeyedLimiter {
  private readonly inFlight = new Map<string, number>();
  private readonly typicalMs = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  constructor(
    private readonly perKey: number,
    private readonly opts: { queueIfTypicalUnderMs: number; maxWaiting: number; maxWaitMs: number } =
      { queueIfTypicalUnderMs: QUEUE_IF_TYPICAL_UNDER_MS, maxWaiting: MAX_WAITING_PER_MERCHANT, maxWaitMs: MAX_SLOT_WAIT_MS },
  ) {}

  tryAcquire(key: string): boolean {
    const n = this.inFlight.get(key) ?? 0;
    if (n >= this.perKey) return false;
    this.inFlight.set(key, n + 1);
    return true;
  }

  /**
   * A slot now, or (for a key whose attempts are known to be quick, within the waiting bound) the
   * next one released within maxWaitMs; false means: put the attempt back.
   */
  acquire(key: string): Promise<boolean> {
    if (this.tryAcquire(key)) return Promise.resolve(true);
    const typical = this.typicalMs.get(key);
    const queue = this.waiting.get(key) ?? [];
    if (typical === undefined || typical >= this.opts.queueIfTypicalUnderMs || queue.length >= this.opts.maxWaiting) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          const q = this.waiting.get(key) ?? [];
          const i = q.indexOf(waiter);
          if (i >= 0) q.splice(i, 1);
          if (q.length === 0) this.waiting.delete(key);
          resolve(false);
        }, this.opts.maxWaitMs),
      };
      queue.push(waiter);
      this.waiting.set(key, queue);
    });
  }

  release(key: string, durationMs?: number): void {
    if (durationMs !== undefined) {
      const before = this.typicalMs.get(key);
      this.typicalMs.delete(key);
      this.typicalMs.set(key, before === undefined ? durationMs : 0.7 * before + 0.3 * durationMs);
      if (this.typicalMs.size > DURATIONS_KEPT) this.typicalMs.delete(this.typicalMs.keys().next().value as string);
    }
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (next) {
      // The slot passes to the first waiter: the in-flight count stays.
      if (queue!.length === 0) this.waiting.delete(key);
      clearTimeout(next.timer);
      next.resolve(true);
      return;
    }
    const n = (this.inFlight.get(key) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, n);
  }

  /** How long to put back an attempt for a busy key: about one recent attempt's duration, jittered. */
  busyDelayMs(key: string, maxMs: number): number {
    const typical = Math.min(Math.max(this.typicalMs.get(key) ?? 0, BUSY_RETRY_MIN_MS), Math.max(maxMs, BUSY_RETRY_MIN_MS));
    return Math.round(typical * (0.5 + Math.random()));
  }
}



async function attempt(s: Services, row: WebhookEventRow): Promise<{ url: string | null; attemptedAt: Date; result: AttemptResult }> {
  const attemptedAt = s.clock.now();
  const target = await webhookTargetOf(s, row.merchant_id);
  const url = target?.url ?? null;
  if (!url || !target?.sealedSecret) {
    return { url, attemptedAt, result: { ok: false, statusCode: null, error: 'no webhook URL configured', durationMs: 0 } };
  }
  let secret: string;
  try {
    secret = s.secrets.decrypt(target.sealedSecret);
  } catch {
    return { url, attemptedAt, result: { ok: false, statusCode: null, error: 'the signing secret cannot be read', durationMs: 0 } };
  }
  const headers = signedHeaders(secret, row.body, row.event, row.id, s.clock.now());
  const result = await postWebhook({ url, body: row.body, headers, timeoutMs: s.config.webhookTimeoutMs, policy: webhookUrlPolicy(s) });
  return { url, attemptedAt, result };
}

export function deliveryHandler(s: Services): (job: Job<DeliveryJob>) => Promise<JobOutcome> {
  const limiter = new KeyedLimiter(PER_MERCHANT_CONCURRENCY);
  const later = (ms: number) => ({ retryAt: new Date(s.clock.now().getTime() + ms) });

  return async (job) => {
    const { eventId, trigger, merchantId } = job.payload;
    if (!(await limiter.acquire(merchantId))) return later(limiter.busyDelayMs(merchantId, s.config.webhookTimeoutMs));
    let durationMs: number | undefined;
    try {
      // The event and its predecessor's state in one read.
      const found = await s.knex.raw<{ rows: Array<WebhookEventRow & { prev_status: string | null }> }>(
        `SELECT e.*, p.delivery_status AS prev_status FROM webhook_events e
         LEFT JOIN webhook_events p ON p.id = e.prev_event_id WHERE e.id = ?`, [eventId]);
      const row = found.rows[0];
      if (!row) return;
      if (trigger === 'scheduled') {
        if (row.delivery_status !== 'pending') return; // delivered (maybe by a redelivery) or finished
        if (row.prev_event_id && (row.prev_status === null || !isFinal(row.prev_status))) return later(WAITING_RECHECK_MS);
        const due = row.next_attempt_at ? new Date(row.next_attempt_at).getTime() : 0;
        if (due > s.clock.now().getTime()) return { retryAt: new Date(due) };
      }
      const { url, attemptedAt, result } = await attempt(s, row);
      crashPoint('during-webhook-delivery');
      durationMs = result.durationMs;
      s.metrics.webhookAttempts.inc({ outcome: webhookOutcome(result, url !== null), trigger });
      const outcome = await recordAttempt(s, eventId, { trigger, url, attemptedAt, ...result });
      s.log.info({
        webhook_id: eventId, event: row.event, merchant_id: row.merchant_id, trigger, attempt: outcome.row.attempt_count,
        status_code: result.statusCode, error: result.error, duration_ms: result.durationMs, delivery_status: outcome.row.delivery_status,
      }, 'webhook attempt');
      if (trigger === 'scheduled' && outcome.nextAttemptAt) return { retryAt: outcome.nextAttemptAt };
      return;
    } finally {
      limiter.release(merchantId, durationMs);
    }
  };
}
