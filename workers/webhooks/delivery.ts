// Delivery attempts, run as durable jobs (infra/scheduler.ts), so the retry schedule survives a
// restart and each attempt runs in one process at a time. An event has one delivery per endpoint it
// goes to (CONTRACT.md §11), each with its own schedule. Job keys: `auto:<event id>:<endpoint id>`
// carries one delivery's retry schedule (`auto:<event id>`, queued before endpoints, is the first
// endpoint's); `manual:<event id>:<endpoint id>:<nonce>` is one redelivery asked for by the merchant
// (an extra attempt now, outside the schedule). Each attempt signs with the endpoint's secret in force
// at that instant (staged rotation: domain/webhook-endpoints.ts signingSecretAt). A disabled or
// deleted endpoint's pending deliveries end `failed` without an attempt; a 410 answer, or 72 hours
// in which every attempt at the endpoint failed, disables it.
//
// Isolation: the job kind runs many attempts at once, but at most PER_ENDPOINT_CONCURRENCY per
// endpoint and PER_MERCHANT_CONCURRENCY per merchant in this process (CONTRACT.md §17: a merchant
// may have 16 endpoints, and 16 endpoints at 4 each would be every slot of the kind). An attempt over
// either bound is put back without counting as an attempt (and before any database read), so a slow
// or dead endpoint holds a few slots at most, a merchant's slow endpoints together a quarter of them,
// and other endpoints' (its merchant's others included) and merchants' deliveries go on. It is put
// back for about as long as that endpoint's (or merchant's) attempts have lately been taking, or have
// been running so far, so a dead endpoint's backlog waits quietly while a busy but healthy one keeps
// its slots full. An endpoint whose attempts are quick has a few over the bound wait in this process
// for the next free slot instead (a burst then costs no put-back, re-claim or timer): never a slow or
// unknown endpoint's, never more than a few, never for long.
import type { Services } from '../../commands/services.ts';
import type { Job, JobOutcome } from '../../infra/scheduler.ts';
import { webhookUrlPolicy } from '../../infra/url-safety.ts';
import { postWebhook, signedHeaders, type AttemptResult } from './sender.ts';
import { recordAttempt } from './store.ts';
import { isFinal, type WebhookEventRow } from '../../projections/webhook-events.ts';
import { JOB_KIND, type DeliveryJob } from '../../commands/webhook-redeliveries.ts';
import { webhookOutcome } from '../../infra/metrics.ts';
import { crashPoint } from '../../infra/crash-points.ts';
import { endpointNow } from './targets.ts';
import { signingSecretAt, type WebhookEndpoint } from '../../domain/webhook-endpoints.ts';
import { disableEndpoint } from '../../commands/webhook-endpoints.ts';

export const OVERALL_CONCURRENCY = 64;
/** Attempts in flight per endpoint: a slow endpoint holds this many slots, never another endpoint's. */
export const PER_ENDPOINT_CONCURRENCY = 4;
/** Attempts in flight per merchant: its endpoints together hold at most a quarter of the kind's slots. */
export const PER_MERCHANT_CONCURRENCY = OVERALL_CONCURRENCY / 4;
/** An endpoint whose attempts have all failed for this long is disabled (CONTRACT.md §11). */
export const DISABLE_AFTER_FAILING_MS = 72 * 3600_000;
/**
 * Shortest put-back of an attempt that found its endpoint's or merchant's slots taken (not an
 * attempt). The put-back is otherwise about one of that endpoint's (merchant's) recent attempts: a hanging endpoint's backlog
 * waits seconds, a fast one's a few tens of milliseconds (at 200 ms, a burst to a healthy endpoint
 * answering in 5 ms held its webhooks 40 attempts' time: the transfer-e2e p99 of bench issue 8).
 */
export const BUSY_RETRY_MIN_MS = 25;
/** A merchant's attempts over the bound wait for a slot here only if its attempts take under this. */
export const QUEUE_IF_TYPICAL_UNDER_MS = 100;
/** At most this many attempts of one merchant wait for a slot (each holds one of the job kind's). */
const MAX_WAITING_PER_ENDPOINT = PER_ENDPOINT_CONCURRENCY;
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
 * Counts in-flight attempts per key and refuses beyond a bound; remembers how long attempts take
 * and since when the key's attempts in flight have been running. A quick key's attempts over the
 * bound may wait for a slot (`acquire`): a release hands its slot straight to the first of them.
 */
export class KeyedLimiter {
  private readonly inFlight = new Map<string, number>();
  /** When each of a key's attempts in flight started, oldest first (a release ends the oldest: close enough). */
  private readonly startedAt = new Map<string, number[]>();
  private readonly typicalMs = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  constructor(
    private readonly perKey: number,
    private readonly opts: { queueIfTypicalUnderMs: number; maxWaiting: number; maxWaitMs: number } =
      { queueIfTypicalUnderMs: QUEUE_IF_TYPICAL_UNDER_MS, maxWaiting: MAX_WAITING_PER_ENDPOINT, maxWaitMs: MAX_SLOT_WAIT_MS },
  ) {}

  tryAcquire(key: string): boolean {
    const n = this.inFlight.get(key) ?? 0;
    if (n >= this.perKey) return false;
    this.inFlight.set(key, n + 1);
    this.startedAt.set(key, [...(this.startedAt.get(key) ?? []), Date.now()]);
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
    if (durationMs !== undefined) this.noteDuration(key, durationMs);
    const started = this.startedAt.get(key)?.slice(1) ?? [];
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (next) {
      // The slot passes to the first waiter: the in-flight count stays.
      this.startedAt.set(key, [...started, Date.now()]);
      if (queue!.length === 0) this.waiting.delete(key);
      clearTimeout(next.timer);
      next.resolve(true);
      return;
    }
    const n = (this.inFlight.get(key) ?? 1) - 1;
    if (n <= 0) {
      this.inFlight.delete(key);
      this.startedAt.delete(key);
    } else {
      this.inFlight.set(key, n);
      this.startedAt.set(key, started);
    }
  }

  private noteDuration(key: string, durationMs: number): void {
    const before = this.typicalMs.get(key);
    this.typicalMs.delete(key);
    this.typicalMs.set(key, before === undefined ? durationMs : 0.7 * before + 0.3 * durationMs);
    if (this.typicalMs.size > DURATIONS_KEPT) this.typicalMs.delete(this.typicalMs.keys().next().value as string);
  }

  /**
   * How long to put back an attempt for a busy key: about one recent attempt's duration, jittered.
   * Before any has finished, as long as its oldest attempt in flight has run so far (else a hanging
   * endpoint's backlog would come back every few tens of milliseconds until the first time-out).
   */
  busyDelayMs(key: string, maxMs: number): number {
    const oldest = this.startedAt.get(key)?.[0];
    const known = this.typicalMs.get(key) ?? (oldest === undefined ? 0 : Date.now() - oldest);
    const typical = Math.min(Math.max(known, BUSY_RETRY_MIN_MS), Math.max(maxMs, BUSY_RETRY_MIN_MS));
    return Math.round(typical * (0.5 + Math.random()));
  }
}

/**
 * The two bounds an attempt must fit in this process: its endpoint's and its merchant's. The
 * endpoint's first (an endpoint's own backlog waits on it without taking its merchant's slots).
 */
export class DeliveryLimiter {
  constructor(
    private readonly endpoints = new KeyedLimiter(PER_ENDPOINT_CONCURRENCY),
    private readonly merchants = new KeyedLimiter(PER_MERCHANT_CONCURRENCY),
  ) {}

  /** A slot under both bounds (undefined), or how long to put the attempt back for, after the bound that refused it. */
  async acquire(merchantId: string, endpointId: string, maxDelayMs: number): Promise<number | undefined> {
    if (!(await this.endpoints.acquire(endpointId))) return this.endpoints.busyDelayMs(endpointId, maxDelayMs);
    if (await this.merchants.acquire(merchantId)) return undefined;
    this.endpoints.release(endpointId);
    return this.merchants.busyDelayMs(merchantId, maxDelayMs);
  }

  release(merchantId: string, endpointId: string, durationMs?: number): void {
    this.merchants.release(merchantId, durationMs);
    this.endpoints.release(endpointId, durationMs);
  }
}



/** An event's row with this endpoint's delivery of it and that delivery's predecessor's state. */
type DeliveryRead = WebhookEventRow & { d_status: string | null; d_next_attempt_at: Date | string | null; d_prev_event_id: string | null; prev_status: string | null };

async function readDelivery(s: Services, eventId: string, endpointId: string): Promise<DeliveryRead | undefined> {
  const found = await s.knex.raw<{ rows: DeliveryRead[] }>(
    `SELECT e.*, d.delivery_status AS d_status, d.next_attempt_at AS d_next_attempt_at, d.prev_event_id AS d_prev_event_id,
       p.delivery_status AS prev_status
     FROM webhook_events e
     LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.endpoint_id = ?
     LEFT JOIN webhook_deliveries p ON p.event_id = d.prev_event_id AND p.endpoint_id = d.endpoint_id
     WHERE e.id = ?`, [endpointId, eventId]);
  return found.rows[0];
}

type Attempted = { url: string | null; attemptedAt: Date; result: AttemptResult; skip: boolean };

/** One signed POST to the endpoint, with the secret in force now (staged rotation); skipped when it is disabled or gone. */
async function attempt(s: Services, row: WebhookEventRow, endpoint: WebhookEndpoint | undefined): Promise<Attempted> {
  const attemptedAt = s.clock.now();
  if (!endpoint || endpoint.status !== 'enabled') {
    const error = endpoint ? 'endpoint disabled' : 'endpoint deleted';
    return { url: endpoint?.url ?? null, attemptedAt, skip: true, result: { ok: false, statusCode: null, error, durationMs: 0 } };
  }
  const url = endpoint.url;
  let secret: string;
  try {
    secret = s.secrets.decrypt(signingSecretAt(endpoint, attemptedAt));
  } catch {
    return { url, attemptedAt, skip: false, result: { ok: false, statusCode: null, error: 'the signing secret cannot be read', durationMs: 0 } };
  }
  const headers = signedHeaders(secret, row.body, row.event, row.id, s.clock.now());
  const result = await postWebhook({ url, body: row.body, headers, timeoutMs: s.config.webhookTimeoutMs, policy: webhookUrlPolicy(s) });
  return { url, attemptedAt, skip: false, result };
}

/** An endpoint that answered 410 Gone, or whose attempts have all failed for 72 hours, is disabled. */
async function disableIfDead(s: Services, merchantId: string, endpointId: string, statusCode: number | null, failingSince: Date | null): Promise<void> {
  const failingMs = failingSince ? s.clock.now().getTime() - failingSince.getTime() : 0;
  const reason = statusCode === 410 ? 'gone' : failingMs >= DISABLE_AFTER_FAILING_MS ? 'failing' : undefined;
  if (!reason) return;
  if (await disableEndpoint(s, merchantId, endpointId, reason)) s.log.warn({ merchant_id: merchantId, endpoint_id: endpointId, reason }, 'webhook endpoint disabled');
}

/** Whether a scheduled delivery should wait (for its predecessor at this endpoint, or its due time): when to look again. */
function notYet(s: Services, row: DeliveryRead): Date | 'done' | undefined {
  if (row.d_status !== 'pending') return 'done'; // delivered (maybe by a redelivery), finished, or never this endpoint's
  if (row.d_prev_event_id && (row.prev_status === null || !isFinal(row.prev_status))) return new Date(s.clock.now().getTime() + WAITING_RECHECK_MS);
  const due = row.d_next_attempt_at ? new Date(row.d_next_attempt_at).getTime() : 0;
  return due > s.clock.now().getTime() ? new Date(due) : undefined;
}

export function deliveryHandler(s: Services): (job: Job<DeliveryJob>) => Promise<JobOutcome> {
  const limiter = new DeliveryLimiter();
  const later = (ms: number) => ({ retryAt: new Date(s.clock.now().getTime() + ms) });

  return async (job) => {
    const { eventId, trigger, merchantId } = job.payload;
    // Jobs queued before endpoints name none: the merchant's first endpoint (its id is the merchant's).
    const endpointId = job.payload.endpointId ?? merchantId;
    const busyFor = await limiter.acquire(merchantId, endpointId, s.config.webhookTimeoutMs);
    if (busyFor !== undefined) return later(busyFor);
    let durationMs: number | undefined;
    try {
      // The delivery's row and the endpoint as it stands, at once: one round trip before the POST, not
      // two (the endpoint read is wasted only for an attempt that is not due, rare).
      const [row, endpoint] = await Promise.all([readDelivery(s, eventId, endpointId), endpointNow(s, merchantId, endpointId)]);
      if (!row) return;
      if (trigger === 'scheduled') {
        const wait = notYet(s, row);
        if (wait === 'done') return;
        if (wait) return { retryAt: wait };
      }
      if (trigger === 'manual' && (!endpoint || endpoint.status !== 'enabled')) return; // a redelivery goes to enabled endpoints only
      const { url, attemptedAt, result, skip } = await attempt(s, row, endpoint);
      crashPoint('during-webhook-delivery');
      durationMs = result.durationMs;
      if (!skip) s.metrics.webhookAttempts.inc({ outcome: webhookOutcome(result, url !== null), trigger });
      const outcome = await recordAttempt(s, eventId, endpointId, { trigger, url, attemptedAt, ...result, skip });
      s.log.info({
        webhook_id: eventId, event: row.event, merchant_id: row.merchant_id, endpoint_id: endpointId, trigger, attempt: outcome.delivery.attempt_count,
        status_code: result.statusCode, error: result.error, duration_ms: result.durationMs, delivery_status: outcome.delivery.delivery_status,
      }, skip ? 'webhook delivery ended: endpoint not enabled' : 'webhook attempt');
      if (!skip && !result.ok) await disableIfDead(s, merchantId, endpointId, result.statusCode, outcome.failingSince);
      if (trigger === 'scheduled' && outcome.nextAttemptAt) return { retryAt: outcome.nextAttemptAt };
      return;
    } finally {
      limiter.release(merchantId, endpointId, durationMs);
    }
  };
}
