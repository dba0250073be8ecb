import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 44 point 1: the event feed's order no longer takes a cluster-wide lock.
//
// A merchant reads only its own feed (CONTRACT §12), so what a reader needs ("a snapshot that sees my
// position P sees every position below P that will ever exist") is needed per merchant, not across
// merchants. Migration 024 drew every position under one advisory lock held to commit: every
// merchant's recording waited for every other's commit. Now the lock is the merchant's own
// (two-key form: FEED_LOCK_CLASS and a hash of the merchant id; a hash shared by two merchants only
// makes them wait for each other): a merchant's positions still become visible in order, and two
// merchants' recordings never wait for each other.
//
// A recording statement carries several merchants' rows (the recorder batches a turn of the event
// loop). The trigger takes each row's lock as the row is inserted, in the rows' order; two batches
// naming two merchants in opposite orders would deadlock. So the recording functions take every
// lock of their rows first, in one order (webhook_events_lock_merchants); the trigger then finds
// them held. The trigger still takes the lock itself, for any other writer of the table.
//
// Across merchants positions are no longer visible in order: the stream watch
// (projections/event-feed-watch.ts) follows each merchant's own newest position instead of one
// process-wide head.
const FEED_LOCK_CLASS = 72_014; // arbitrary, fixed; with the two-key form, apart from one-key locks

const lockMerchants = `CREATE FUNCTION webhook_events_lock_merchants(p_rows jsonb) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE k integer;
  BEGIN
    FOR k IN SELECT DISTINCT hashtext((value->>'merchant_id')::uuid::text) FROM jsonb_array_elements(p_rows) ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock(${FEED_LOCK_CLASS}, k);
    END LOOP;
  END $$`;

const positionTrigger = (lock: string) => `CREATE OR REPLACE FUNCTION webhook_events_feed_position() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM ${lock};
    NEW.feed_seq := nextval('webhook_events_feed_seq');
    RETURN NEW;
  END $$`;

/** The insert of both recording paths: the rows in their order (a resource's events take positions in the order they happened). */
const insertRows = `INSERT INTO webhook_events (id, merchant_id, event, resource_type, resource_id, customer_id, stream_id, stream_version,
      prev_event_id, body, delivery_status, next_attempt_at, created_at, recorded_at, updated_at, fanout_endpoints)
    SELECT r.id, r.merchant_id, r.event, r.resource_type, r.resource_id, r.customer_id, r.stream_id, r.stream_version,
      r.prev_event_id, r.body, r.delivery_status, r.next_attempt_at, r.created_at, r.recorded_at, r.updated_at, r.fanout_endpoints
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, n)
      CROSS JOIN LATERAL jsonb_populate_record(NULL::webhook_events, x.value) AS r
    ORDER BY x.n
    ON CONFLICT DO NOTHING
    RETURNING id`;

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    lockMerchants,
    positionTrigger(`pg_advisory_xact_lock(${FEED_LOCK_CLASS}, hashtext(NEW.merchant_id::text))`),
    // The path without endpoints (workers/webhooks/store.ts `plain`): one statement, atomic.
    `CREATE FUNCTION record_webhook_events(p_rows jsonb) RETURNS SETOF uuid LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM webhook_events_lock_merchants(p_rows);
       RETURN QUERY WITH inserted AS (${insertRows}) SELECT id FROM inserted;
     END $$`,
    // Migration 026's procedure, the merchants' locks taken first.
    `CREATE OR REPLACE PROCEDURE record_webhook_events_fanout(p_rows jsonb, p_job_kind text, p_now timestamptz,
       INOUT o_inserted uuid[], INOUT o_scheduled boolean)
     LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM webhook_events_lock_merchants(p_rows);
       WITH inserted AS (${insertRows})
       SELECT coalesce(array_agg(id), '{}') INTO o_inserted FROM inserted;
       -- Ends the merchants' locks: the fan-out below runs outside them.
       COMMIT;
       o_scheduled := webhook_events_fan_out(ARRAY(SELECT (value->>'id')::uuid FROM jsonb_array_elements(p_rows)), p_job_kind, p_now) > 0;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP FUNCTION record_webhook_events(jsonb)',
    positionTrigger('pg_advisory_xact_lock(7201410024)'),
    `CREATE OR REPLACE PROCEDURE record_webhook_events_fanout(p_rows jsonb, p_job_kind text, p_now timestamptz,
       INOUT o_inserted uuid[], INOUT o_scheduled boolean)
     LANGUAGE plpgsql AS $$
     BEGIN
       WITH inserted AS (${insertRows})
       SELECT coalesce(array_agg(id), '{}') INTO o_inserted FROM inserted;
       COMMIT;
       o_scheduled := webhook_events_fan_out(ARRAY(SELECT (value->>'id')::uuid FROM jsonb_array_elements(p_rows)), p_job_kind, p_now) > 0;
     END $$`,
    'DROP FUNCTION webhook_events_lock_merchants(jsonb)',
  ]);
}
