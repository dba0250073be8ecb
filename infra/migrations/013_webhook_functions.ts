import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Recording webhook events and attempts in one round trip each (bench issue 8: a transfer's three
// webhooks cost about 45 statements, a transaction's BEGIN and COMMIT included). The functions do
// what workers/webhooks/store.ts did statement by statement, in the same order and under the same
// locks. Each statement of a PL/pgSQL function takes a fresh snapshot (READ COMMITTED), so:
//  - record_webhook_attempt locks the event row, records the attempt, moves the delivery state along
//    the retry schedule and, when the event becomes final, releases the resource's next event (its
//    first delivery job); the successor query sees a successor recorded while the lock was awaited;
//  - record_webhook_events inserts a resource's webhook events in order (idempotent by id) and gives
//    each new one its first delivery job when its predecessor is final, reading the predecessor
//    FOR SHARE, so an attempt finishing it at the same time either sees the new row or is seen.
// long: one migration's DDL, applied as written; splitting it would change nothing a reader needs.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE FUNCTION record_webhook_attempt(
       p_event_id uuid, p_trigger text, p_url text, p_attempted_at timestamptz, p_duration_ms integer,
       p_status_code integer, p_error text, p_ok boolean, p_schedule double precision[], p_now timestamptz, p_job_kind text
     ) RETURNS TABLE (o_row jsonb, o_released integer) LANGUAGE plpgsql AS $$
     DECLARE
       r webhook_events%ROWTYPE;
       v_updated webhook_events%ROWTYPE;
       v_attempt integer;
       v_scheduled integer;
       v_status text;
       v_next timestamptz;
       v_released integer := 0;
     BEGIN
       SELECT * INTO r FROM webhook_events WHERE id = p_event_id FOR UPDATE;
       IF NOT FOUND THEN
         RAISE EXCEPTION 'webhook event % not found', p_event_id;
       END IF;
       v_attempt := r.attempt_count + 1;
       INSERT INTO webhook_attempts (event_id, attempt, trigger, url, attempted_at, duration_ms, status_code, error, succeeded)
         VALUES (p_event_id, v_attempt, p_trigger, p_url, p_attempted_at, greatest(0, p_duration_ms), p_status_code, left(p_error, 500), p_ok);
       v_status := r.delivery_status;
       v_scheduled := r.scheduled_attempts;
       v_next := r.next_attempt_at;
       IF p_trigger = 'scheduled' THEN
         v_scheduled := v_scheduled + 1;
       END IF;
       IF p_ok THEN
         v_status := 'delivered';
         v_next := NULL;
       ELSIF p_trigger = 'scheduled' THEN
         -- The schedule's n-th delay follows the n-th scheduled attempt; after the last, failed.
         IF v_scheduled >= coalesce(array_length(p_schedule, 1), 0) + 1 THEN
           v_status := 'failed';
           v_next := NULL;
         ELSE
           v_next := p_now + make_interval(secs => p_schedule[v_scheduled]);
         END IF;
       END IF;
       UPDATE webhook_events SET delivery_status = v_status, attempt_count = v_attempt, scheduled_attempts = v_scheduled,
         next_attempt_at = v_next, last_attempt_at = p_attempted_at, last_status_code = p_status_code,
         last_error = CASE WHEN p_ok THEN NULL ELSE p_error END,
         delivered_at = CASE WHEN p_ok AND r.delivered_at IS NULL THEN p_now ELSE r.delivered_at END,
         updated_at = p_now
       WHERE id = p_event_id RETURNING * INTO v_updated;
       IF r.delivery_status = 'pending' AND v_status <> 'pending' THEN
         WITH released AS (
           UPDATE webhook_events SET next_attempt_at = p_now, updated_at = p_now
           WHERE prev_event_id = p_event_id AND delivery_status = 'pending' AND scheduled_attempts = 0
           RETURNING id, merchant_id)
         INSERT INTO jobs (kind, key, payload, due_at, created_at)
           SELECT p_job_kind, 'auto:' || released.id,
             jsonb_build_object('eventId', released.id, 'merchantId', released.merchant_id, 'trigger', 'scheduled'), p_now, p_now
           FROM released
           ON CONFLICT (kind, key) DO NOTHING;
         GET DIAGNOSTICS v_released = ROW_COUNT;
       END IF;
       RETURN QUERY SELECT to_jsonb(v_updated), v_released;
     END $$`,
    `CREATE FUNCTION record_webhook_events(p_rows jsonb, p_job_kind text, p_now timestamptz)
     RETURNS TABLE (o_inserted integer, o_scheduled integer) LANGUAGE plpgsql AS $$
     DECLARE
       e jsonb;
       v_id uuid;
       v_prev uuid;
       v_status text;
       v_inserted integer := 0;
       v_scheduled integer := 0;
     BEGIN
       FOR e IN SELECT value FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, n) ORDER BY n LOOP
         INSERT INTO webhook_events (id, merchant_id, event, resource_type, resource_id, customer_id, stream_id, stream_version,
             prev_event_id, body, delivery_status, next_attempt_at, created_at, recorded_at, updated_at)
           SELECT id, merchant_id, event, resource_type, resource_id, customer_id, stream_id, stream_version,
             prev_event_id, body, delivery_status, next_attempt_at, created_at, recorded_at, updated_at
           FROM jsonb_populate_record(NULL::webhook_events, e)
           ON CONFLICT DO NOTHING
           RETURNING id, prev_event_id INTO v_id, v_prev;
         CONTINUE WHEN NOT FOUND;
         v_inserted := v_inserted + 1;
         IF v_prev IS NOT NULL THEN
           SELECT delivery_status INTO v_status FROM webhook_events WHERE id = v_prev FOR SHARE;
           CONTINUE WHEN NOT FOUND OR v_status = 'pending';
         END IF;
         INSERT INTO jobs (kind, key, payload, due_at, created_at)
           VALUES (p_job_kind, 'auto:' || v_id,
             jsonb_build_object('eventId', v_id, 'merchantId', e->>'merchant_id', 'trigger', 'scheduled'), p_now, p_now)
           ON CONFLICT (kind, key) DO NOTHING;
         v_scheduled := v_scheduled + 1;
       END LOOP;
       RETURN QUERY SELECT v_inserted, v_scheduled;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP FUNCTION record_webhook_events(jsonb, text, timestamptz)',
    'DROP FUNCTION record_webhook_attempt(uuid, text, text, timestamptz, integer, integer, text, boolean, double precision[], timestamptz, text)',
  ]);
}
