import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    // Idempotency outcomes: written by the command layer, not a projection (it must exist before the
    // command runs, to refuse a concurrent duplicate).
    `CREATE TABLE idempotency_keys (
      merchant_id uuid NOT NULL,
      key text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      request_hash text NOT NULL,
      resource_id uuid NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
      response_status integer,
      response_body jsonb,
      locked_until timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (merchant_id, key)
    )`,
    `CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at)`,
    // Read models of the merchant aggregate.
    `CREATE TABLE merchants (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      status text NOT NULL,
      routing jsonb NOT NULL,
      pricing jsonb NOT NULL,
      webhook_url text,
      webhook_secret_sealed text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      api_key text NOT NULL UNIQUE,
      secret_hash text NOT NULL,
      previous_secret_hash text,
      previous_valid_until timestamptz,
      status text NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX api_keys_merchant ON api_keys (merchant_id, created_at)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE idempotency_keys', 'DROP TABLE merchants', 'DROP TABLE api_keys']);
}
