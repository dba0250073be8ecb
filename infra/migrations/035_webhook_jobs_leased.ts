import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 44: a webhook delivery's job comes back already claimed by the process that made it.
//
// A delivery job is made by a database function: the recording's fan-out (a resource's first event)
// or the attempt that makes a delivery final (its successor, the resource's next event at the same
// endpoint). The process that called it then nudged its scheduler, which sent a claim for the job it
// had just written: a timer, a round trip and a commit before each attempt, twice in a row at the
// end of every transfer (`transfer.payout.completed`, then `transfer.completed`).
//
// The functions below make the same jobs and, in the same transaction, lease them to the caller
// (lease id and expiry as a claim sets them, at most p_limit: the caller's free slots), answering
// them as a claim would; the caller runs them at once. A job is never visible unleased, so no other
// process's claim takes it meanwhile; one left unleased (over the limit, or held by a lease already)
// is claimed as before, and a lease whose process dies expires as a claim's does.
//
// The functions of migrations 023 and 034 stay unchanged beside them: a process of the previous
// version calls those during a rolling deploy.

/** The jobs of `keys` that are due and free, leased (the claim's update), answered as a jsonb array of claimed rows. */
const leaseJobs = (keys: string) => `
  WITH leased AS (
    UPDATE jobs j SET locked_until = p_locked_until, lease_id = p_lease_id, attempts = j.attempts + 1
    WHERE (j.kind, j.key) IN (
        SELECT p_job_kind, k FROM (${keys}) AS wanted(k)
        WHERE p_limit > 0 LIMIT p_limit)
      AND j.due_at <= p_now AND (j.locked_until IS NULL OR j.locked_until < p_now)
    RETURNING j.kind, j.key, j.payload, j.attempts, j.due_at, j.lease_id)
  SELECT coalesce(jsonb_agg(to_jsonb(leased)), '[]'::jsonb) FROM leased`;

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE FUNCTION record_webhook_delivery_attempt_leased(
       p_event_id uuid, p_endpoint_id uuid, p_trigger text, p_url text, p_attempted_at timestamptz, p_duration_ms integer,
       p_status_code integer, p_error text, p_ok boolean, p_skip boolean, p_schedule double precision[], p_now timestamptz, p_job_kind text,
       p_lease_id uuid, p_locked_until timestamptz, p_limit integer
     ) RETURNS TABLE (o_delivery jsonb, o_released integer, o_failing_since timestamptz, o_leased jsonb) LANGUAGE plpgsql AS $$
     DECLARE
       r record;
       v_leased jsonb := '[]'::jsonb;
     BEGIN
       SELECT * INTO r FROM record_webhook_delivery_attempt(p_event_id, p_endpoint_id, p_trigger, p_url, p_attempted_at, p_duration_ms,
         p_status_code, p_error, p_ok, p_skip, p_schedule, p_now, p_job_kind);
       IF r.o_released > 0 THEN
         -- The successors it released: the resource's next events at this endpoint, due now.
         ${leaseJobs(`SELECT 'auto:' || d.event_id || ':' || p_endpoint_id FROM webhook_deliveries d
             WHERE d.prev_event_id = p_event_id AND d.endpoint_id = p_endpoint_id AND d.delivery_status = 'pending'`)}
         INTO v_leased;
       END IF;
       RETURN QUERY SELECT r.o_delivery, r.o_released, r.o_failing_since, v_leased;
     END $$`,
    // Migration 034's procedure, its jobs leased. o_scheduled: jobs are left for a claim (over the limit).
    `CREATE PROCEDURE record_webhook_events_fanout_leased(p_rows jsonb, p_job_kind text, p_now timestamptz,
       p_lease_id uuid, p_locked_until timestamptz, p_limit integer,
       INOUT o_inserted uuid[], INOUT o_scheduled boolean, INOUT o_leased jsonb)
     LANGUAGE plpgsql AS $$
     DECLARE
       v_ids uuid[];
       v_keys text[];
     BEGIN
       -- The rows, in order, under their merchants' feed locks: migration 034's recording function.
       SELECT coalesce(array_agg(id), '{}') INTO o_inserted FROM record_webhook_events(p_rows) AS inserted(id);
       -- Ends the merchants' locks: the fan-out below runs outside them.
       COMMIT;
       v_ids := ARRAY(SELECT (value->>'id')::uuid FROM jsonb_array_elements(p_rows));
       PERFORM webhook_events_fan_out(v_ids, p_job_kind, p_now);
       -- The first attempts' jobs of these events (one left by a call that crashed after its fan-out too).
       v_keys := ARRAY(SELECT 'auto:' || d.event_id || ':' || d.endpoint_id FROM webhook_deliveries d WHERE d.event_id = ANY (v_ids));
       ${leaseJobs('SELECT unnest(v_keys)')}
       INTO o_leased;
       -- Left for a claim: any of them still due and free (over the limit).
       o_scheduled := EXISTS (SELECT 1 FROM jobs j WHERE j.kind = p_job_kind AND j.key = ANY (v_keys)
         AND j.due_at <= p_now AND (j.locked_until IS NULL OR j.locked_until < p_now));
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP PROCEDURE record_webhook_events_fanout_leased(jsonb, text, timestamptz, uuid, timestamptz, integer, uuid[], boolean, jsonb)',
    `DROP FUNCTION record_webhook_delivery_attempt_leased(uuid, uuid, text, text, timestamptz, integer, integer, text, boolean, boolean,
       double precision[], timestamptz, text, uuid, timestamptz, integer)`,
  ]);
}
