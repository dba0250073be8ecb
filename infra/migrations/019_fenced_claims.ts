import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 28: exactly once per Idempotency-Key.
// - claim_token: the holder of an in-progress claim; completing, releasing or giving up a claim
//   names it, so an attempt that was taken over cannot touch the key under its successor. NULL on a
//   completed key and on a claim given up for a retry to take over.
// - otp_vault.attempt: each create attempt seals its OTP in a row of its own, so an attempt that
//   fails for certain deletes only its own row, never the one another attempt with the same
//   reference (a take-over of the same key) committed a payment with. Rows sealed before this
//   migration keep the empty attempt.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'ALTER TABLE idempotency_keys ADD COLUMN claim_token uuid',
    'ALTER TABLE otp_vault DROP CONSTRAINT otp_vault_pkey',
    `ALTER TABLE otp_vault ADD COLUMN attempt text NOT NULL DEFAULT ''`,
    'ALTER TABLE otp_vault ADD PRIMARY KEY (reference, attempt)',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'ALTER TABLE idempotency_keys DROP COLUMN claim_token',
    'ALTER TABLE otp_vault DROP CONSTRAINT otp_vault_pkey',
    `DELETE FROM otp_vault WHERE attempt <> ''`,
    'ALTER TABLE otp_vault DROP COLUMN attempt',
    'ALTER TABLE otp_vault ADD PRIMARY KEY (reference)',
  ]);
}
