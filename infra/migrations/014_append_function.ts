import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// A group-commit batch of the PostgreSQL event store in one round trip (bench issue 8: it was four:
// BEGIN with the append lock, the streams' versions, the insert, COMMIT). Called as one statement,
// the function runs in that statement's own transaction, so the order guarantee is unchanged
// (infra/eventstore/postgres.ts): it takes the append lock before any position is drawn and holds
// it until the transaction has committed. The batch was planned on versions the store assumed;
// under the lock they are checked, and if any stream moved, nothing is written and the actual
// versions come back (conflict = true) for the store to plan again with them.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE FUNCTION event_store_append(
       p_lock bigint, p_check_streams text[], p_check_versions integer[],
       p_stream text[], p_version integer[], p_id uuid[], p_type text[], p_data jsonb[], p_meta jsonb[], p_at timestamptz[],
       p_moved_streams text[], p_moved_versions integer[], p_channel text
     ) RETURNS TABLE (global_position bigint, stream_id text, stream_version integer, event_id uuid, type text,
       data jsonb, metadata jsonb, created_at timestamptz, conflict boolean)
     LANGUAGE plpgsql AS $$
     #variable_conflict use_column
     BEGIN
       PERFORM pg_advisory_xact_lock(p_lock);
       IF EXISTS (
         SELECT 1 FROM unnest(p_check_streams, p_check_versions) AS c(s, v)
         LEFT JOIN streams st ON st.stream_id = c.s WHERE coalesce(st.version, 0) <> c.v
       ) THEN
         RETURN QUERY SELECT NULL::bigint, c.s, coalesce(st.version, 0), NULL::uuid, NULL::text, NULL::jsonb, NULL::jsonb,
           NULL::timestamptz, true
         FROM unnest(p_check_streams) AS c(s) LEFT JOIN streams st ON st.stream_id = c.s;
         RETURN;
       END IF;
       IF coalesce(array_length(p_id, 1), 0) = 0 THEN
         RETURN;
       END IF;
       RETURN QUERY WITH inserted AS (
         INSERT INTO events (stream_id, stream_version, event_id, type, data, metadata, created_at)
         SELECT * FROM unnest(p_stream, p_version, p_id, p_type, p_data, p_meta, p_at)
         RETURNING global_position, stream_id, stream_version, event_id, type, data, metadata, created_at
       ) SELECT inserted.*, false FROM inserted ORDER BY inserted.global_position;
       INSERT INTO streams (stream_id, version) SELECT * FROM unnest(p_moved_streams, p_moved_versions)
         ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version;
       IF p_channel IS NOT NULL THEN
         -- The batch's last position: the sequence's last value drawn in this session (under the lock).
         PERFORM pg_notify(p_channel, currval(pg_get_serial_sequence('events', 'global_position'))::text);
       END IF;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `DROP FUNCTION event_store_append(bigint, text[], integer[], text[], integer[], uuid[], text[], jsonb[], jsonb[],
       timestamptz[], text[], integer[], text)`,
  ]);
}
