import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// The money core: read models of quotes, payins, payouts, wallets and the ledger; and three tables
// that are not read models: the OTP vault, the provider gateway's legs, and the sandbox provider's
// own state (it simulates an external system, so it must survive restarts).
// long: one migration's DDL, applied as written; splitting it would change nothing a reader needs.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    // Read models. `events` keeps the stream's events as stored, so the row's state is the fold of
    // them and `body` its rendering (projections/views): the API answers `body` as it is.
    `CREATE TABLE quotes (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      customer_id uuid,
      flow_type text NOT NULL,
      status text NOT NULL,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      version integer NOT NULL,
      events jsonb NOT NULL,
      body jsonb NOT NULL
    )`,
    `CREATE INDEX quotes_merchant_created ON quotes (merchant_id, created_at DESC, id DESC)`,
    `CREATE TABLE payins (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      customer_id uuid NOT NULL,
      quote_id uuid NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL,
      events jsonb NOT NULL,
      body jsonb NOT NULL
    )`,
    `CREATE INDEX payins_merchant_created ON payins (merchant_id, created_at DESC, id DESC)`,
    `CREATE TABLE payouts (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      customer_id uuid NOT NULL,
      quote_id uuid NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL,
      events jsonb NOT NULL,
      body jsonb NOT NULL
    )`,
    `CREATE INDEX payouts_merchant_created ON payouts (merchant_id, created_at DESC, id DESC)`,
    `CREATE TABLE wallets (
      merchant_id uuid NOT NULL,
      currency text NOT NULL,
      available numeric(30, 0) NOT NULL CHECK (available >= 0),
      reserved numeric(30, 0) NOT NULL CHECK (reserved >= 0),
      version integer NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (merchant_id, currency)
    )`,
    // One row per posting: statements and audits (sum of amounts by side per event is equal).
    `CREATE TABLE ledger_entries (
      event_id uuid NOT NULL,
      posting_index integer NOT NULL,
      global_position bigint NOT NULL,
      merchant_id uuid NOT NULL,
      currency text NOT NULL,
      movement text NOT NULL,
      movement_id text NOT NULL,
      reference_type text NOT NULL,
      reference_id text NOT NULL,
      account text NOT NULL,
      side text NOT NULL CHECK (side IN ('debit', 'credit')),
      amount numeric(30, 0) NOT NULL CHECK (amount > 0),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (event_id, posting_index)
    )`,
    `CREATE INDEX ledger_entries_merchant ON ledger_entries (merchant_id, currency, global_position)`,
    `CREATE INDEX ledger_entries_reference ON ledger_entries (reference_id)`,
    // Sealed one-time passwords between the create call and the provider: deleted once handed over
    // (and purged once stale). Never in clear.
    `CREATE TABLE otp_vault (
      reference text PRIMARY KEY,
      sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
    // The gateway's record of which aggregate owns a provider leg (callbacks name only the reference).
    `CREATE TABLE provider_legs (
      reference text PRIMARY KEY,
      owner text NOT NULL,
      provider text NOT NULL,
      kind text NOT NULL,
      provider_reference text,
      created_at timestamptz NOT NULL
    )`,
    // The sandbox provider's own books (infra/providers/sandbox.ts).
    `CREATE TABLE sandbox_provider_legs (
      reference text PRIMARY KEY,
      provider_reference text NOT NULL UNIQUE,
      kind text NOT NULL,
      operator_code text NOT NULL,
      phone text NOT NULL,
      amount numeric(30, 0) NOT NULL,
      currency text NOT NULL,
      planned text NOT NULL CHECK (planned IN ('completed', 'failed', 'stuck')),
      planned_reason text,
      state text NOT NULL CHECK (state IN ('pending', 'completed', 'failed')),
      reason text,
      settle_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      settled_at timestamptz
    )`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP TABLE quotes', 'DROP TABLE payins', 'DROP TABLE payouts', 'DROP TABLE wallets', 'DROP TABLE ledger_entries',
    'DROP TABLE otp_vault', 'DROP TABLE provider_legs', 'DROP TABLE sandbox_provider_legs',
  ]);
}
