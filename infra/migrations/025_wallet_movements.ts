import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 35 (CONTRACT.md §13): one row per wallet movement (one wallet event), with its effect on the
// merchant's two accounts and the balances right after it, as the wallet's decider stated them.
// The source of balances as of any time, of the wallet's transactions and of statements
// (projections/wallet-movements.ts). `at` never goes backwards along a wallet's versions
// (domain/wallet.ts), so the last movement before T is one probe of the (merchant, currency, at)
// index however long the history, and its balances are the balances as of T.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE wallet_movements (
      merchant_id uuid NOT NULL,
      currency text NOT NULL,
      wallet_version integer NOT NULL,
      event_id uuid NOT NULL,
      global_position bigint NOT NULL,
      at timestamptz NOT NULL,
      movement text NOT NULL,
      movement_id text NOT NULL,
      reference_type text NOT NULL,
      reference_id text NOT NULL,
      counterparty text NOT NULL,
      available_delta numeric(30, 0) NOT NULL,
      reserved_delta numeric(30, 0) NOT NULL,
      fee numeric(30, 0) NOT NULL,
      available_balance numeric(30, 0) NOT NULL,
      reserved_balance numeric(30, 0) NOT NULL,
      PRIMARY KEY (merchant_id, currency, wallet_version)
    )`,
    `CREATE INDEX wallet_movements_as_of ON wallet_movements (merchant_id, currency, at DESC, wallet_version DESC)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE wallet_movements']);
}
