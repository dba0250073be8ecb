import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// The merchant dashboard's accounts (issue 11). Not event-sourced money: who may sign in for which
// merchant. Anything a dashboard user changes on keys or webhooks still goes through the merchant's
// command handlers, so events stay the single record of it.
//  - dashboard_users: one merchant each; the password as an scrypt hash (dashboard/passwords.ts); the
//    invitation (set-password link) only as a SHA-256 of its token, with an expiry.
//  - dashboard_sign_in_failures: failed sign-ins by e-mail address (whether or not a user has it, so
//    a lockout never tells an attacker which addresses exist).
//  - dashboard_sessions: the session id only as a SHA-256; the CSRF token of the session's forms.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE dashboard_users (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      email text NOT NULL UNIQUE,
      password_hash text,
      password_set_at timestamptz,
      invite_token_hash text UNIQUE,
      invite_expires_at timestamptz,
      last_sign_in_at timestamptz,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX dashboard_users_merchant ON dashboard_users (merchant_id, created_at)`,
    `CREATE TABLE dashboard_sign_in_failures (
      email text PRIMARY KEY,
      failed_attempts integer NOT NULL,
      locked_until timestamptz,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE TABLE dashboard_sessions (
      id_hash text PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
      merchant_id uuid NOT NULL,
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
    `CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id)`,
    `CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE dashboard_sessions', 'DROP TABLE dashboard_sign_in_failures', 'DROP TABLE dashboard_users']);
}
