import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 9: a replayed idempotent answer must be byte-identical to the first one. jsonb stores a
// parsed form (keys re-sorted by length, then bytes), so the replay came back with its fields in
// another order than the first answer; json keeps the text exactly as written.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, ['ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE json USING response_body::json']);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE jsonb USING response_body::jsonb']);
}
