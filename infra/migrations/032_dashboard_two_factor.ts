import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Two-factor sign-in for the dashboard (issue 43 point 2, CONTRACT §18): like dashboard_users, who may
// sign in, not event-sourced money.
//  - dashboard_two_factor: one row per member who started enrolment. The TOTP secret sealed with the
//    server key (AES-256-GCM, infra/secrets.ts, as webhook signing secrets are: it must be readable to
//    check a code); enrolled_at stays NULL until a first valid code confirms it; last_time_step is the
//    RFC 6238 step of the last code accepted, so a code is taken once (no replay within its window).
//  - dashboard_recovery_codes: ten per enrolment, only as an HMAC under the server key, each used once.
//  - dashboard_merchant_settings: require_two_factor, set by the owner. Its own table, not a column
//    of merchants: that table is a read model the event store rebuilds, this is an access rule.
//  - dashboard_pending_sign_ins: the short-lived step between a correct password and a correct code,
//    by the SHA-256 of its cookie.
//  - dashboard_two_factor_failures: failed codes by subject ("member:<id>", "address:<ip>"), the same
//    shape and rule as dashboard_sign_in_failures (commands/dashboard-users.ts).
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE dashboard_two_factor (
      user_id uuid PRIMARY KEY REFERENCES dashboard_users (id) ON DELETE CASCADE,
      secret_sealed text NOT NULL,
      enrolled_at timestamptz,
      last_time_step bigint,
      created_at timestamptz NOT NULL
    )`,
    `CREATE TABLE dashboard_recovery_codes (
      user_id uuid NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
      code_hash text NOT NULL,
      used_at timestamptz,
      PRIMARY KEY (user_id, code_hash)
    )`,
    `CREATE TABLE dashboard_merchant_settings (
      merchant_id uuid PRIMARY KEY,
      require_two_factor boolean NOT NULL DEFAULT false,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE TABLE dashboard_pending_sign_ins (
      id_hash text PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL
    )`,
    `CREATE INDEX dashboard_pending_sign_ins_expires ON dashboard_pending_sign_ins (expires_at)`,
    `CREATE TABLE dashboard_two_factor_failures (
      subject text PRIMARY KEY,
      failed_attempts integer NOT NULL,
      locked_until timestamptz,
      updated_at timestamptz NOT NULL
    )`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP TABLE dashboard_two_factor_failures', 'DROP TABLE dashboard_pending_sign_ins', 'DROP TABLE dashboard_merchant_settings',
    'DROP TABLE dashboard_recovery_codes', 'DROP TABLE dashboard_two_factor',
  ]);
}
