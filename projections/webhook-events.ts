// The webhook events and their attempts as the merchant API and the dashboard read them
// (`GET /events`, `GET /events/{id}`). The webhook worker records them (workers/webhooks/store.ts).
//
// Delivery states: an event has one delivery per endpoint it went to (CONTRACT.md §11); its
// `delivery_status` sums them up: `pending` (an attempt is due or the schedule is running at some
// endpoint), `failed` (some endpoint's delivery failed), `delivered` (every endpoint acknowledged it),
// `not_configured` (no enabled endpoint took it when it was recorded; listed, never sent unless
// redelivered). Each attempt names its endpoint.
import type { Knex } from 'knex';

/** The webhook envelope (seed, "Events"): {id, event, created_at, data: {type, id, object}}. */
export interface Envelope {
  id: string;
  event: string;
  created_at: string;
  data: { type: string; id: string; object: Record<string, unknown> };
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'not_configured';
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'failed', 'not_configured'];
export const isFinal = (s: string) => s !== 'pending';

export interface WebhookEventRow {
  id: string;
  merchant_id: string;
  event: string;
  resource_type: string;
  resource_id: string;
  customer_id: string | null;
  stream_id: string;
  stream_version: number;
  prev_event_id: string | null;
  body: string;
  delivery_status: DeliveryStatus;
  attempt_count: number;
  scheduled_attempts: number;
  next_attempt_at: Date | string | null;
  last_attempt_at: Date | string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | string | null;
  created_at: Date | string;
  recorded_at: Date | string;
  updated_at: Date | string;
}

/** One event's delivery to one endpoint (CONTRACT.md §11: each with its own attempts and schedule). */
export interface DeliveryRow {
  event_id: string;
  endpoint_id: string;
  merchant_id: string;
  prev_event_id: string | null;
  delivery_status: DeliveryStatus;
  attempt_count: number;
  scheduled_attempts: number;
  next_attempt_at: Date | string | null;
  last_attempt_at: Date | string | null;
  delivered_at: Date | string | null;
}

export interface AttemptRow {
  event_id: string;
  /** The endpoint attempted (a merchant configured before endpoints: its first endpoint, id = merchant id). */
  endpoint_id: string;
  attempt: number;
  trigger: 'scheduled' | 'manual';
  url: string | null;
  attempted_at: Date | string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  succeeded: boolean;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export interface EventView extends Envelope {
  delivery_status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  attempts: Array<{
    endpoint_id: string;
    attempt: number;
    trigger: 'scheduled' | 'manual';
    attempted_at: string;
    url: string | null;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    succeeded: boolean;
  }>;
}

export function eventView(row: WebhookEventRow, attempts: AttemptRow[]): EventView {
  const envelope = JSON.parse(row.body) as Envelope;
  return {
    ...envelope,
    delivery_status: row.delivery_status,
    attempt_count: row.attempt_count,
    next_attempt_at: iso(row.next_attempt_at),
    last_attempt_at: iso(row.last_attempt_at),
    delivered_at: iso(row.delivered_at),
    attempts: attempts
      .filter((a) => a.event_id === row.id)
      // Per endpoint, attempts are numbered 1, 2, …; listed in the order they were made.
      .sort((x, y) => new Date(x.attempted_at).getTime() - new Date(y.attempted_at).getTime() || x.attempt - y.attempt)
      .map((a) => ({
        endpoint_id: a.endpoint_id, attempt: a.attempt, trigger: a.trigger, attempted_at: iso(a.attempted_at)!, url: a.url,
        status_code: a.status_code, error: a.error, duration_ms: a.duration_ms, succeeded: a.succeeded,
      })),
  };
}

export async function attemptsOf(knex: Knex, eventIds: string[]): Promise<AttemptRow[]> {
  if (eventIds.length === 0) return [];
  return (await knex('webhook_attempts').whereIn('event_id', eventIds).orderBy([{ column: 'event_id' }, { column: 'attempted_at' }, { column: 'attempt' }])) as AttemptRow[];
}

export async function readEvent(knex: Knex, merchantId: string, id: string): Promise<EventView | undefined> {
  const row = (await knex('webhook_events').where({ id, merchant_id: merchantId }).first()) as WebhookEventRow | undefined;
  if (!row) return undefined;
  return eventView(row, await attemptsOf(knex, [row.id]));
}
