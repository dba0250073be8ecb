import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Refunds (CONTRACT §9): the read model of `refund-<id>` streams (projections/refunds.ts), as
// payins' and payouts': the filter columns and the rendered API JSON. Lists filter by payin.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE refunds (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      payin_id uuid NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL,
      body jsonb NOT NULL
    )`,
    `CREATE INDEX refunds_merchant_created ON refunds (merchant_id, created_at DESC, id DESC)`,
    `CREATE INDEX refunds_payin ON refunds (payin_id)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE refunds']);
}
