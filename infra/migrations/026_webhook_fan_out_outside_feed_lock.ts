import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 40 point 2 (CONTRACT.md §17): a webhook event's fan-out (a delivery row and a first job per
// endpoint that takes it) is no longer written under the event feed's lock.
//
// The feed lock (migration 024) is taken by the trigger on webhook_events and held until the
// inserting transaction commits. record_webhook_events_fanout (migration 023) inserted each event and
// then, in the same transaction, every endpoint's delivery and job: one merchant with many endpoints
// held the cluster-wide lock for all of them, and every other merchant's recording waited behind it.
//
// Now recording is one call of a procedure that commits twice:
//  1. the events, each with the endpoints it is still to be fanned out to (`fanout_endpoints`, one
//     jsonb value per event whatever the number of endpoints); COMMIT, which ends the feed lock;
//  2. webhook_events_fan_out: the deliveries and jobs of those events, outside any global lock.
// A crash between the two leaves events whose `fanout_endpoints` is still set: the bus redelivers
// the message the recorder had not acknowledged, and the recorder fans them out then
// (workers/webhooks/store.ts). Nothing is attempted before the fan-out, as before: jobs come with it.
//
// Order per resource and endpoint (migration 023) needs a resource's earlier event fanned out
// before its later one (its deliveries are the later one's predecessors). The fan-out therefore
// takes every event still to be fanned out of the resources it is given, locked and in stream
// order, whichever call recorded them; a concurrent fan-out of the same resource waits for those
// locks, then finds them done. Locks are taken in (stream_id, stream_version) order by every
// fan-out, so two never deadlock.
//
// A manual redelivery may have made an event's delivery row to an endpoint before the fan-out
// (`not_configured`, an attempt beside it): the fan-out makes it the scheduled delivery it is owed
// and sums the event up again.
//
// The 023 function stays (a process of the previous version calls it during a rolling deploy); the
// procedure shares its name, with two output arguments.
// long: one migration's DDL, applied as written; splitting it would change nothing a reader needs.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'ALTER TABLE webhook_events ADD COLUMN fanout_endpoints jsonb',
    `CREATE INDEX webhook_events_fanout_pending ON webhook_events (stream_id, stream_version) WHERE fanout_endpoints IS NOT NULL`,
    `CREATE FUNCTION webhook_events_fan_out(p_ids uuid[], p_job_kind text, p_now timestamptz)
     RETURNS integer LANGUAGE plpgsql AS $$
     DECLARE
       ev record;
       ep text;
       v_prev uuid;
       v_status text;
       v_had boolean;
       v_jobs integer := 0;
     BEGIN
       FOR ev IN SELECT w.id, w.merchant_id, w.stream_id, w.stream_version, w.fanout_endpoints FROM webhook_events w
           WHERE w.fanout_endpoints IS NOT NULL
             AND w.stream_id IN (SELECT stream_id FROM webhook_events WHERE id = ANY (p_ids))
           ORDER BY w.stream_id, w.stream_version
           FOR UPDATE LOOP
         PERFORM 1 FROM webhook_deliveries WHERE event_id = ev.id;
         v_had := FOUND;
         FOR ep IN SELECT jsonb_array_elements_text(ev.fanout_endpoints) LOOP
           -- The previous event of this resource that this endpoint was sent (none: nothing to wait for).
           SELECT d.event_id INTO v_prev FROM webhook_deliveries d JOIN webhook_events w ON w.id = d.event_id
             WHERE d.endpoint_id = ep::uuid AND w.stream_id = ev.stream_id AND w.stream_version < ev.stream_version
             ORDER BY w.stream_version DESC LIMIT 1;
           INSERT INTO webhook_deliveries (event_id, endpoint_id, merchant_id, prev_event_id, delivery_status, next_attempt_at, created_at, updated_at)
             VALUES (ev.id, ep::uuid, ev.merchant_id, v_prev, 'pending', p_now, p_now, p_now)
             ON CONFLICT (event_id, endpoint_id) DO UPDATE SET delivery_status = 'pending', prev_event_id = excluded.prev_event_id,
               next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at;
           IF v_prev IS NOT NULL THEN
             SELECT delivery_status INTO v_status FROM webhook_deliveries WHERE event_id = v_prev AND endpoint_id = ep::uuid FOR SHARE;
             CONTINUE WHEN v_status = 'pending';
           END IF;
           INSERT INTO jobs (kind, key, payload, due_at, created_at)
             VALUES (p_job_kind, 'auto:' || ev.id || ':' || ep,
               jsonb_build_object('eventId', ev.id, 'endpointId', ep, 'merchantId', ev.merchant_id, 'trigger', 'scheduled'), p_now, p_now)
             ON CONFLICT (kind, key) DO NOTHING;
           v_jobs := v_jobs + 1;
         END LOOP;
         UPDATE webhook_events SET fanout_endpoints = NULL WHERE id = ev.id;
         IF v_had THEN
           PERFORM webhook_event_summary(ev.id, p_now, NULL, NULL, false, false);
         END IF;
       END LOOP;
       RETURN v_jobs;
     END $$`,
    `CREATE PROCEDURE record_webhook_events_fanout(p_rows jsonb, p_job_kind text, p_now timestamptz,
       INOUT o_inserted uuid[], INOUT o_scheduled boolean)
     LANGUAGE plpgsql AS $$
     BEGIN
       -- In the rows' order: a resource's events take feed positions in the order they happened.
       WITH inserted AS (
         INSERT INTO webhook_events (id, merchant_id, event, resource_type, resource_id, customer_id, stream_id, stream_version,
             prev_event_id, body, delivery_status, next_attempt_at, created_at, recorded_at, updated_at, fanout_endpoints)
           SELECT r.id, r.merchant_id, r.event, r.resource_type, r.resource_id, r.customer_id, r.stream_id, r.stream_version,
             r.prev_event_id, r.body, r.delivery_status, r.next_attempt_at, r.created_at, r.recorded_at, r.updated_at, r.fanout_endpoints
           FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, n)
             CROSS JOIN LATERAL jsonb_populate_record(NULL::webhook_events, x.value) AS r
           ORDER BY x.n
           ON CONFLICT DO NOTHING
           RETURNING id)
       SELECT coalesce(array_agg(id), '{}') INTO o_inserted FROM inserted;
       -- Ends the feed lock: the fan-out below runs outside it.
       COMMIT;
       -- Every row given, not only those inserted: one recorded by a call that crashed before its
       -- fan-out (a redelivered message's) is fanned out here.
       o_scheduled := webhook_events_fan_out(ARRAY(SELECT (value->>'id')::uuid FROM jsonb_array_elements(p_rows)), p_job_kind, p_now) > 0;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP PROCEDURE record_webhook_events_fanout(jsonb, text, timestamptz, uuid[], boolean)',
    'DROP FUNCTION webhook_events_fan_out(uuid[], text, timestamptz)',
    'DROP INDEX webhook_events_fanout_pending',
    'ALTER TABLE webhook_events DROP COLUMN fanout_endpoints',
  ]);
}
