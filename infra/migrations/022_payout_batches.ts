import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// CONTRACT §10: the read model of bulk payouts (projections/payout-batches.ts), what
// GET /payouts/bulk/{id} reads: one row per batch, its `payout_batch.created` event's data as `body`
// (each item's reference and payout id or refusal); the payouts' current statuses are read from
// `payouts` beside it. Rebuilt from the events like every read model.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE payout_batches (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      body jsonb NOT NULL
    )`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS payout_batches');
}
