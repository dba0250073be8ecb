import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// The event store (append-only), the streams' versions, and the checkpoints of every reader.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE events (
      global_position bigserial PRIMARY KEY,
      transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      stream_id text NOT NULL,
      stream_version integer NOT NULL,
      event_id uuid NOT NULL UNIQUE,
      type text NOT NULL,
      data jsonb NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      UNIQUE (stream_id, stream_version)
    )`,
    `CREATE TABLE streams (stream_id text PRIMARY KEY, version integer NOT NULL)`,
    `CREATE TABLE checkpoints (
      name text PRIMARY KEY,
      position bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    // Append-only: the database itself refuses to change or remove a recorded event.
    `CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'events are append-only'; END $$`,
    `CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
      FOR EACH ROW EXECUTE FUNCTION events_are_append_only()`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP TABLE events', 'DROP TABLE streams', 'DROP TABLE checkpoints', 'DROP FUNCTION events_are_append_only()',
  ]);
}
