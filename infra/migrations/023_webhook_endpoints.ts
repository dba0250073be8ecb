import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Webhook endpoints (CONTRACT.md §11): an event goes to every enabled endpoint of its merchant whose
// filter takes it, each with its own delivery (state, attempts, retry schedule): one row per
// (event, endpoint) in webhook_deliveries. The event row keeps a summary over its deliveries (what
// GET /events lists and filters on). Order per resource holds per endpoint: a delivery names the
// previous event of the same resource that this endpoint was sent (`prev_event_id`), and waits until
// that one's delivery is final, exactly as events did (migration 013), with the same locks.
//
// Before endpoints, a merchant had one URL: its deliveries become the deliveries of its first
// endpoint, whose id is the merchant id (commands/webhook-endpoints.ts adopts the URL under that
// id), and their attempts name it. Jobs already queued (`auto:<event>`, no endpoint) go to it too.
//
// webhook_endpoint_failures: since when every attempt at an endpoint has failed (none succeeded
// since); the worker disables an endpoint failing for 72 hours.
// long: one migration's DDL, applied as written; splitting it would change nothing a reader needs.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE webhook_deliveries (
      event_id uuid NOT NULL REFERENCES webhook_events (id),
      endpoint_id uuid NOT NULL,
      merchant_id uuid NOT NULL,
      prev_event_id uuid,
      delivery_status text NOT NULL CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'not_configured')),
      attempt_count integer NOT NULL DEFAULT 0,
      scheduled_attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (event_id, endpoint_id)
    )`,
    `CREATE INDEX webhook_deliveries_prev ON webhook_deliveries (prev_event_id, endpoint_id) WHERE prev_event_id IS NOT NULL`,
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, merchant_id, prev_event_id, delivery_status, attempt_count, scheduled_attempts,
        next_attempt_at, last_attempt_at, last_status_code, last_error, delivered_at, created_at, updated_at)
      SELECT id, merchant_id, merchant_id, prev_event_id, delivery_status, attempt_count, scheduled_attempts,
        next_attempt_at, last_attempt_at, last_status_code, last_error, delivered_at, recorded_at, updated_at
      FROM webhook_events WHERE delivery_status <> 'not_configured'`,
    'ALTER TABLE webhook_attempts ADD COLUMN endpoint_id uuid',
    'UPDATE webhook_attempts a SET endpoint_id = e.merchant_id FROM webhook_events e WHERE e.id = a.event_id',
    'ALTER TABLE webhook_attempts ALTER COLUMN endpoint_id SET NOT NULL',
    'ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey',
    'ALTER TABLE webhook_attempts ADD PRIMARY KEY (event_id, endpoint_id, attempt)',
    `CREATE TABLE webhook_endpoint_failures (
      endpoint_id uuid PRIMARY KEY,
      failing_since timestamptz NOT NULL
    )`,
    `CREATE FUNCTION record_webhook_events_fanout(p_rows jsonb, p_job_kind text, p_now timestamptz)
     RETURNS TABLE (o_id uuid, o_scheduled boolean) LANGUAGE plpgsql AS $$
     DECLARE
       e jsonb;
       ep text;
       v_id uuid;
       v_stream text;
       v_version integer;
       v_prev uuid;
       v_status text;
       v_any boolean;
     BEGIN
       FOR e IN SELECT value FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, n) ORDER BY n LOOP
         INSERT INTO webhook_events (id, merchant_id, event, resource_type, resource_id, customer_id, stream_id, stream_version,
             prev_event_id, body, delivery_status, next_attempt_at, created_at, recorded_at, updated_at)
           SELECT id, merchant_id, event, resource_type, resource_id, customer_id, stream_id, stream_version,
             prev_event_id, body, delivery_status, next_attempt_at, created_at, recorded_at, updated_at
           FROM jsonb_populate_record(NULL::webhook_events, e)
           ON CONFLICT DO NOTHING
           RETURNING id, stream_id, stream_version INTO v_id, v_stream, v_version;
         CONTINUE WHEN NOT FOUND;
         v_any := false;
         FOR ep IN SELECT jsonb_array_elements_text(coalesce(e->'endpoints', '[]'::jsonb)) LOOP
           -- The previous event of this resource that this endpoint was sent (none: nothing to wait for).
           SELECT d.event_id INTO v_prev FROM webhook_deliveries d JOIN webhook_events w ON w.id = d.event_id
             WHERE d.endpoint_id = ep::uuid AND w.stream_id = v_stream AND w.stream_version < v_version
             ORDER BY w.stream_version DESC LIMIT 1;
           INSERT INTO webhook_deliveries (event_id, endpoint_id, merchant_id, prev_event_id, delivery_status, next_attempt_at, created_at, updated_at)
             VALUES (v_id, ep::uuid, (e->>'merchant_id')::uuid, v_prev, 'pending', p_now, p_now, p_now);
           IF v_prev IS NOT NULL THEN
             SELECT delivery_status INTO v_status FROM webhook_deliveries WHERE event_id = v_prev AND endpoint_id = ep::uuid FOR SHARE;
             CONTINUE WHEN v_status = 'pending';
           END IF;
           INSERT INTO jobs (kind, key, payload, due_at, created_at)
             VALUES (p_job_kind, 'auto:' || v_id || ':' || ep,
               jsonb_build_object('eventId', v_id, 'endpointId', ep, 'merchantId', e->>'merchant_id', 'trigger', 'scheduled'), p_now, p_now)
             ON CONFLICT (kind, key) DO NOTHING;
           v_any := true;
         END LOOP;
         o_id := v_id; o_scheduled := v_any; RETURN NEXT;
       END LOOP;
     END $$`,
    `CREATE FUNCTION webhook_event_summary(p_event_id uuid, p_now timestamptz, p_status_code integer, p_error text, p_attempted boolean, p_ok boolean)
     RETURNS void LANGUAGE sql AS $$
       UPDATE webhook_events w SET delivery_status = s.status, attempt_count = s.attempts, scheduled_attempts = s.scheduled,
         next_attempt_at = s.next_at, last_attempt_at = s.last_at,
         last_status_code = CASE WHEN p_attempted THEN p_status_code ELSE w.last_status_code END,
         last_error = CASE WHEN NOT p_attempted THEN w.last_error WHEN p_ok THEN NULL ELSE p_error END,
         delivered_at = CASE WHEN s.status = 'delivered' THEN coalesce(w.delivered_at, p_now) ELSE w.delivered_at END,
         updated_at = p_now
       FROM (SELECT
           CASE WHEN bool_or(delivery_status = 'pending') THEN 'pending' WHEN bool_or(delivery_status = 'failed') THEN 'failed'
             WHEN bool_or(delivery_status = 'delivered') THEN 'delivered' ELSE 'not_configured' END AS status,
           sum(attempt_count)::integer AS attempts, sum(scheduled_attempts)::integer AS scheduled,
           min(next_attempt_at) FILTER (WHERE delivery_status = 'pending') AS next_at, max(last_attempt_at) AS last_at
         FROM webhook_deliveries WHERE event_id = p_event_id) s
       WHERE w.id = p_event_id
     $$`,
    `CREATE FUNCTION record_webhook_delivery_attempt(
       p_event_id uuid, p_endpoint_id uuid, p_trigger text, p_url text, p_attempted_at timestamptz, p_duration_ms integer,
       p_status_code integer, p_error text, p_ok boolean, p_skip boolean, p_schedule double precision[], p_now timestamptz, p_job_kind text
     ) RETURNS TABLE (o_delivery jsonb, o_released integer, o_failing_since timestamptz) LANGUAGE plpgsql AS $$
     DECLARE
       ev webhook_events%ROWTYPE;
       d webhook_deliveries%ROWTYPE;
       v_updated webhook_deliveries%ROWTYPE;
       v_attempt integer;
       v_scheduled integer;
       v_status text;
       v_next timestamptz;
       v_released integer := 0;
       v_failing timestamptz;
     BEGIN
       -- The event first: attempts of one event at several endpoints update its summary in turn.
       SELECT * INTO ev FROM webhook_events WHERE id = p_event_id FOR UPDATE;
       IF NOT FOUND THEN
         RAISE EXCEPTION 'webhook event % not found', p_event_id;
       END IF;
       SELECT * INTO d FROM webhook_deliveries WHERE event_id = p_event_id AND endpoint_id = p_endpoint_id FOR UPDATE;
       IF NOT FOUND THEN
         -- A redelivery to an endpoint the event was not sent to when it happened: no schedule.
         INSERT INTO webhook_deliveries (event_id, endpoint_id, merchant_id, delivery_status, created_at, updated_at)
           VALUES (p_event_id, p_endpoint_id, ev.merchant_id, 'not_configured', p_now, p_now) RETURNING * INTO d;
       END IF;
       v_attempt := d.attempt_count;
       v_status := d.delivery_status;
       v_scheduled := d.scheduled_attempts;
       v_next := d.next_attempt_at;
       IF p_skip THEN
         -- The endpoint is disabled or deleted: its schedule ends without an attempt.
         IF v_status = 'pending' THEN
           v_status := 'failed';
           v_next := NULL;
         END IF;
       ELSE
         v_attempt := v_attempt + 1;
         INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, trigger, url, attempted_at, duration_ms, status_code, error, succeeded)
           VALUES (p_event_id, p_endpoint_id, v_attempt, p_trigger, p_url, p_attempted_at, greatest(0, p_duration_ms), p_status_code, left(p_error, 500), p_ok);
         IF p_trigger = 'scheduled' THEN
           v_scheduled := v_scheduled + 1;
         END IF;
         IF p_ok THEN
           v_status := 'delivered';
           v_next := NULL;
           DELETE FROM webhook_endpoint_failures WHERE endpoint_id = p_endpoint_id;
         ELSE
           IF p_trigger = 'scheduled' THEN
             IF v_scheduled >= coalesce(array_length(p_schedule, 1), 0) + 1 THEN
               v_status := 'failed';
               v_next := NULL;
             ELSE
               v_next := p_now + make_interval(secs => p_schedule[v_scheduled]);
             END IF;
           END IF;
           INSERT INTO webhook_endpoint_failures (endpoint_id, failing_since) VALUES (p_endpoint_id, p_attempted_at)
             ON CONFLICT (endpoint_id) DO NOTHING;
           SELECT failing_since INTO v_failing FROM webhook_endpoint_failures WHERE endpoint_id = p_endpoint_id;
         END IF;
       END IF;
       UPDATE webhook_deliveries SET delivery_status = v_status, attempt_count = v_attempt, scheduled_attempts = v_scheduled,
         next_attempt_at = v_next,
         last_attempt_at = CASE WHEN p_skip THEN d.last_attempt_at ELSE p_attempted_at END,
         last_status_code = CASE WHEN p_skip THEN d.last_status_code ELSE p_status_code END,
         last_error = CASE WHEN p_ok THEN NULL ELSE p_error END,
         delivered_at = CASE WHEN p_ok AND d.delivered_at IS NULL THEN p_now ELSE d.delivered_at END,
         updated_at = p_now
       WHERE event_id = p_event_id AND endpoint_id = p_endpoint_id RETURNING * INTO v_updated;
       IF d.delivery_status = 'pending' AND v_status <> 'pending' THEN
         WITH released AS (
           UPDATE webhook_deliveries SET next_attempt_at = p_now, updated_at = p_now
           WHERE prev_event_id = p_event_id AND endpoint_id = p_endpoint_id AND delivery_status = 'pending' AND scheduled_attempts = 0
           RETURNING event_id, merchant_id)
         INSERT INTO jobs (kind, key, payload, due_at, created_at)
           SELECT p_job_kind, 'auto:' || released.event_id || ':' || p_endpoint_id,
             jsonb_build_object('eventId', released.event_id, 'endpointId', p_endpoint_id, 'merchantId', released.merchant_id, 'trigger', 'scheduled'),
             p_now, p_now
           FROM released
           ON CONFLICT (kind, key) DO NOTHING;
         GET DIAGNOSTICS v_released = ROW_COUNT;
       END IF;
       PERFORM webhook_event_summary(p_event_id, p_now, p_status_code, p_error, NOT p_skip, p_ok);
       RETURN QUERY SELECT to_jsonb(v_updated), v_released, v_failing;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP FUNCTION record_webhook_delivery_attempt(uuid, uuid, text, text, timestamptz, integer, integer, text, boolean, boolean, double precision[], timestamptz, text)',
    'DROP FUNCTION webhook_event_summary(uuid, timestamptz, integer, text, boolean, boolean)',
    'DROP FUNCTION record_webhook_events_fanout(jsonb, text, timestamptz)',
    'DROP TABLE webhook_endpoint_failures',
    'ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey',
    'ALTER TABLE webhook_attempts ADD PRIMARY KEY (event_id, attempt)',
    'ALTER TABLE webhook_attempts DROP COLUMN endpoint_id',
    'DROP TABLE webhook_deliveries',
  ]);
}
