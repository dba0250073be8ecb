import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Bench issue 8: the webhook recorder writes the rows of the events it records within one turn of
// the event loop in one call (workers/webhooks/store.ts). Each call then needs to know which of its
// rows were new, so this variant of record_webhook_events (migration 013, kept for a rollback)
// answers a row per event inserted, with whether its first delivery job was scheduled. Same
// statements, order and locks.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE FUNCTION record_webhook_events_each(p_rows jsonb, p_job_kind text, p_now timestamptz)
     RETURNS TABLE (o_id uuid, o_scheduled boolean) LANGUAGE plpgsql AS $$
     DECLARE
       e jsonb;
       v_id uuid;
       v_prev uuid;
       v_status text;
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
         IF v_prev IS NOT NULL THEN
           SELECT delivery_status INTO v_status FROM webhook_events WHERE id = v_prev FOR SHARE;
           IF NOT FOUND OR v_status = 'pending' THEN
             o_id := v_id; o_scheduled := false; RETURN NEXT;
             CONTINUE;
           END IF;
         END IF;
         INSERT INTO jobs (kind, key, payload, due_at, created_at)
           VALUES (p_job_kind, 'auto:' || v_id,
             jsonb_build_object('eventId', v_id, 'merchantId', e->>'merchant_id', 'trigger', 'scheduled'), p_now, p_now)
           ON CONFLICT (kind, key) DO NOTHING;
         o_id := v_id; o_scheduled := true; RETURN NEXT;
       END LOOP;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP FUNCTION record_webhook_events_each(jsonb, text, timestamptz)']);
}
