import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Bench issue 8: a payment or transfer row no longer carries its stream's events (half of every
// row's JSON: each write sent and parsed them again, and a rebuild spent most of its time there).
// The projection reads a stream's earlier events from the event store when it does not hold them
// (projections/history.ts). Existing rows stay as they are: their other columns are unchanged.
const TABLES = ['quotes', 'payins', 'payouts', 'transfers'];

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, TABLES.map((t) => `ALTER TABLE ${t} DROP COLUMN events`));
}

// The code before this migration folds a row's stored events: it needs them in every row, so going
// back empties these read models and sets their projections back to the first event to refill them.
export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    ...TABLES.map((t) => `ALTER TABLE ${t} ADD COLUMN events jsonb NOT NULL DEFAULT '[]'::jsonb`),
    `TRUNCATE ${TABLES.join(', ')}`,
    `UPDATE checkpoints SET position = 0 WHERE name IN ('money', 'transfers')`,
  ]);
}
