import type { Knex } from 'knex';

// Issue 32: each stream's latest snapshot (its state folded up to `version`, encoded by its decider
// under the shape name `shape`). Derived data, one row a stream: rebuilt from the events at will,
// and checked against them by the audit.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE snapshots (
    stream_id text PRIMARY KEY,
    version integer NOT NULL CHECK (version > 0),
    shape text NOT NULL,
    state jsonb NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now()
  )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS snapshots');
}
