import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// event_store_append (migration 014) with the batch's events as one JSON document instead of seven
// arrays (bench issue 8): node-postgres escapes every element of a `jsonb[]` parameter, copying each
// event's data and metadata twice (12% of the service's allocations under the payin load), and the
// server then parses the array literal before each element's JSON. A document is written once by
// JSON.stringify and parsed once. Same lock, same check, same order, same answer as 014, whose
// function stays for processes of the previous version during an upgrade.
//
// The lock and the check are restated from 014 on purpose. A migration's SQL stays as it was
// written (sharing a fragment with 014 would let a later edit change what 014 creates on a new
// database), and a function that hands the document to 014's measured slower: 1.22 to 1.45 ms for
// a 40-event batch on PostgreSQL as PL/pgSQL, 1.47 to 1.56 as SQL, against 1.02 to 1.15 for this
// one (bench/PROFILE.md §16).
//
// p_events: [{"s": stream, "v": version, "i": event id, "t": type, "d": data, "m": metadata}, ...]
// in the order the events are to take their positions; p_at: the batch's created_at.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE FUNCTION event_store_append(
       p_lock bigint, p_check_streams text[], p_check_versions integer[],
       p_events jsonb, p_at timestamptz,
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
       IF coalesce(jsonb_array_length(p_events), 0) = 0 THEN
         RETURN;
       END IF;
       RETURN QUERY WITH inserted AS (
         INSERT INTO events (stream_id, stream_version, event_id, type, data, metadata, created_at)
         SELECT e.doc->>'s', (e.doc->>'v')::integer, (e.doc->>'i')::uuid, e.doc->>'t', e.doc->'d', e.doc->'m', p_at
         FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(doc, n)
         ORDER BY e.n
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
    'DROP FUNCTION event_store_append(bigint, text[], integer[], jsonb, timestamptz, text[], integer[], text)',
  ]);
}
