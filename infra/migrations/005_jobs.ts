import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Durable timers: provider status re-checks, webhook retries. Not a read model: workers own it.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE jobs (
      kind text NOT NULL,
      key text NOT NULL,
      payload jsonb NOT NULL,
      due_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      locked_until timestamptz,
      lease_id uuid,
      last_error text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (kind, key)
    )`,
    `CREATE INDEX jobs_due ON jobs (kind, due_at)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE jobs']);
}
