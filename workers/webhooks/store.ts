// The webhook tables: recording events (once per domain event id, before any delivery) with one
// delivery per endpoint that takes them (CONTRACT.md §11: webhook_deliveries, migration 023), and
// recording each endpoint's attempts with the resulting delivery state (the merchant API reads them:
// projections/webhook-events.ts).
//
// Delivery states, per (event, endpoint): `pending` (an attempt is due or the schedule is running),
// `delivered` (a 2xx acknowledged it), `failed` (every scheduled attempt failed, or the endpoint was
// disabled or deleted). The event row sums them up (`not_configured`: no enabled endpoint took it when
// it was recorded; listed, never sent unless redelivered).
//
// Order per resource and endpoint: each delivery names the resource's previous webhook event that
// the same endpoint was sent (`prev_event_id`). A delivery gets its job only once that one is final;
// the attempt that makes it final schedules its successor. Both sides lock the predecessor delivery
// (FOR SHARE / FOR UPDATE), so a successor recorded while its predecessor finishes is never lost.
//
// Fan-out outside the feed lock (issue 40, migration 026): the event rows commit first (the
// merchants' feed locks, migration 034, are held only for them), then the deliveries and jobs are written in a
// transaction of their own. An event left with its fan-out undone (a crash between the two) is
// fanned out when its message comes again: the recorder acknowledges a message only after both.
import type { Knex } from 'knex';
import type { Services } from '../../commands/services.ts';
import type { ForwardedEvent } from '../../infra/bus/forwarded-event.ts';
import { draftOf, type WebhookEventDraft } from './envelope.ts';
import type { DeliveryRow } from '../../projections/webhook-events.ts';
import { JOB_KIND, autoJobKey } from '../../commands/webhook-redeliveries.ts';
import { webhookResourceOf } from './resources.ts';
import { endpointsAsOf } from './targets.ts';
import { acceptsEvent } from '../../domain/webhook-endpoints.ts';
import { StatementBatcher } from '../../infra/statement-batcher.ts';
import type { LeasedJob } from '../../infra/scheduler.ts';



/**
 * Records the webhook event(s) of one forwarded domain event: the event itself and any earlier
 * webhook event of the same resource not yet recorded (so the order chain is always complete).
 * Idempotent: a redelivered message inserts nothing. Returns how many rows were inserted.
 */
export async function recordWebhookEvent(s: Services, ev: ForwardedEvent, opts: { firstDelivery?: boolean } = {}): Promise<number> {
  const resource = webhookResourceOf(ev.stream_id, ev.type);
  if (!resource) return 0;
  // A message seen before (a redelivery) is usually recorded already: one lookup saves the stream
  // read. A first delivery almost never is, so it skips the lookup; the inserts below are
  // idempotent by event id either way (a re-sent first delivery inserts nothing).
  if (!opts.firstDelivery) {
    const already = (await s.knex('webhook_events').where({ id: ev.id }).first('id', 'fanout_endpoints')) as { fanout_endpoints: unknown } | undefined;
    if (already) {
      if (already.fanout_endpoints !== null) await fanOut(s, [ev.id]);
      return 0;
    }
  }
  const stream = (await s.store.readStream(ev.stream_id, 1, ev.version)).filter((e) => e.version <= ev.version);
  const hooks = stream.filter((e) => resource.events.includes(e.type));
  if (!hooks.some((e) => e.id === ev.id)) throw new Error(`event ${ev.id} not found in ${ev.stream_id} at version ${ev.version}`);
  const drafts: WebhookEventDraft[] = hooks.map((e) => draftOf(resource, stream, e));
  const merchantId = drafts[drafts.length - 1]!.merchantId;
  if (!merchantId || drafts.some((d) => d.merchantId !== merchantId)) {
    throw new Error(`webhook snapshot of ${ev.stream_id} carries no (or an inconsistent) merchant_id`);
  }
  const now = s.clock.now();
  // Every enabled endpoint whose filter takes the event gets a delivery of its own (CONTRACT.md §11).
  const endpoints = (await endpointsAsOf(s, merchantId, BigInt(ev.position))).filter((e) => e.status === 'enabled');
  const targets = (event: string) => endpoints.filter((e) => acceptsEvent(e, event)).map((e) => e.id);
  const rowOf = (d: WebhookEventDraft, i: number) => {
    const to = targets(d.envelope.event);
    return {
      id: d.envelope.id, merchant_id: merchantId, event: d.envelope.event, resource_type: d.resourceType,
      resource_id: d.resourceId, customer_id: d.customerId, stream_id: d.streamId, stream_version: d.streamVersion,
      prev_event_id: i > 0 ? drafts[i - 1]!.envelope.id : null, body: d.body, delivery_status: to.length > 0 ? 'pending' : 'not_configured',
      next_attempt_at: to.length > 0 ? now : null, created_at: sortInstant(d.envelope.created_at, d.streamVersion), recorded_at: now, updated_at: now,
      fanout_endpoints: to.length > 0 ? to : null,
    };
  };
  const rows = drafts.map(rowOf);
  const configured = rows.some((r) => r.fanout_endpoints !== null);
  return (configured ? recorders(s).scheduling : recorders(s).plain).submit(configured ? rows : rows.map(({ fanout_endpoints: _, ...r }) => r));
}

/** The deliveries and jobs of recorded events whose fan-out was not done (webhook_events_fan_out, migration 026). */
async function fanOut(s: Services, eventIds: string[]): Promise<void> {
  const r = await s.knex.raw<{ rows: Array<{ jobs: number }> }>('SELECT webhook_events_fan_out(?::uuid[], ?, ?) AS jobs', [eventIds, JOB_KIND, s.clock.now()]);
  if (r.rows[0]!.jobs > 0) s.scheduler.nudge(JOB_KIND);
}

type EventRows = Array<Record<string, unknown> & { id: string }>;

/**
 * The rows of the events recorded within one turn of the event loop, written in one statement
 * (bench issue 8: a statement per payin before). Each call's rows stay in their order, and every
 * call gets the number of its rows that were new (a row also in an earlier call of the same
 * statement counts for that call).
 */
interface Recorders {
  /** No webhook URL: the rows alone, nothing to schedule (one statement: record_webhook_events, migration 034). */
  plain: StatementBatcher<EventRows, number>;
  /**
   * In order, each new row, committed; then, outside the merchants' feed locks, a delivery per endpoint, each with
   * its first delivery job if that endpoint's delivery of the resource's previous event is final: the
   * procedure record_webhook_events_fanout (migration 026), one round trip.
   */
  scheduling: StatementBatcher<EventRows, number>;
}

const built = new WeakMap<Services, Recorders>();

function recorders(s: Services): Recorders {
  let r = built.get(s);
  if (r) return r;
  const newPerCall = (calls: EventRows[], inserted: Set<string>) => calls.map((rows) => rows.filter((row) => inserted.delete(row.id)).length);
  r = {
    plain: new StatementBatcher(async (calls) => {
      // A function, not a plain INSERT: it takes the rows' merchants' feed locks first, in one order (migration 034).
      const res = await s.knex.raw<{ rows: Array<{ id: string }> }>('SELECT record_webhook_events(?::jsonb) AS id', [JSON.stringify(calls.flat())]);
      return newPerCall(calls, new Set(res.rows.map((x) => x.id)));
    }),
    scheduling: new StatementBatcher(async (calls) => {
      // A CALL, never inside a transaction: the procedure commits the events before the fan-out. The
      // first attempts' jobs come back leased to this process (migration 035): run at once, no claim.
      const lease = s.scheduler.leaseFor(JOB_KIND);
      const res = await s.knex.raw<{ rows: Array<{ o_inserted: string[]; o_scheduled: boolean; o_leased: LeasedJob[] }> }>(
        'CALL record_webhook_events_fanout_leased(?::jsonb, ?::text, ?::timestamptz, ?::uuid, ?::timestamptz, ?::integer, NULL::uuid[], NULL::boolean, NULL::jsonb)',
        [JSON.stringify(calls.flat()), JOB_KIND, s.clock.now(), lease.leaseId, lease.lockedUntil, lease.limit],
      );
      const { o_inserted: inserted, o_scheduled: scheduled, o_leased: leased } = res.rows[0]!;
      s.scheduler.adopt(JOB_KIND, leased);
      if (scheduled) s.scheduler.nudge(JOB_KIND);
      return newPerCall(calls, new Set(inserted));
    }),
  };
  built.set(s, r);
  return r;
}

export interface AttemptOutcome {
  delivery: DeliveryRow;
  /** Set when the schedule continues: when the next scheduled attempt is due. */
  nextAttemptAt: Date | null;
  /** Since when every attempt at this endpoint has failed (null after a success or a skip). */
  failingSince: Date | null;
}

/**
 * Records one finished attempt at one endpoint (or, `skip`, the end of a delivery whose endpoint is
 * disabled or gone: no attempt) and moves that delivery's state and the event's summary; when the
 * delivery becomes final, the endpoint's delivery of the resource's next event (if recorded and
 * waiting) gets its job. One round trip: record_webhook_delivery_attempt (migration 023), under the
 * event row's and the delivery row's locks.
 */
export async function recordAttempt(
  s: Services,
  eventId: string,
  endpointId: string,
  a: { trigger: 'scheduled' | 'manual'; url: string | null; attemptedAt: Date; durationMs: number; statusCode: number | null; error: string | null; ok: boolean; skip?: boolean },
): Promise<AttemptOutcome> {
  const now = s.clock.now();
  // The successor's job comes back leased to this process (migration 035): it runs at once, no claim.
  const lease = s.scheduler.leaseFor(JOB_KIND);
  const r = await s.knex.raw<{ rows: Array<{ o_delivery: DeliveryRow; o_released: number; o_failing_since: string | Date | null; o_leased: LeasedJob[] }> }>(
    `SELECT o_delivery, o_released, o_failing_since, o_leased
     FROM record_webhook_delivery_attempt_leased(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::double precision[], ?, ?, ?::uuid, ?::timestamptz, ?::integer)`,
    [eventId, endpointId, a.trigger, a.url, a.attemptedAt, Math.round(a.durationMs), a.statusCode, a.error, a.ok, a.skip === true,
      s.config.webhookRetryScheduleSeconds, now, JOB_KIND, lease.leaseId, lease.lockedUntil, lease.limit],
  );
  const { o_delivery: delivery, o_released: released, o_failing_since: failing, o_leased: leased } = r.rows[0]!;
  s.scheduler.adopt(JOB_KIND, leased);
  if (released > leased.length) s.scheduler.nudge(JOB_KIND);
  const pending = delivery.delivery_status === 'pending';
  return {
    delivery, failingSince: failing === null ? null : new Date(failing),
    nextAttemptAt: pending && delivery.next_attempt_at ? new Date(delivery.next_attempt_at) : null,
  };
}


/**
 * The row's created_at orders `GET /events` (newest first). Events appended together share one
 * timestamp (a transfer's `transfer.payout.completed` and `transfer.completed`), so the stream
 * version is added as microseconds: one resource's events list in the order they happened. What a
 * merchant sees is the envelope's own created_at (milliseconds), unchanged.
 */
export function sortInstant(createdAtIso: string, streamVersion: number): string {
  return createdAtIso.replace(/\.([0-9]{3})Z$/, (_m, ms: string) => `.${ms}${String(streamVersion % 1000).padStart(3, '0')}Z`);
}
