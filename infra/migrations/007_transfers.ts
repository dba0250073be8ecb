import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE transfers (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      customer_id uuid NOT NULL,
      quote_id uuid NOT NULL,
      status text NOT NULL,
      payin_status text NOT NULL,
      payout_status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL,
      events jsonb NOT NULL,
      body jsonb NOT NULL
    )`,
    `CREATE INDEX transfers_merchant_created ON transfers (merchant_id, created_at DESC, id DESC)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE transfers']);
}
