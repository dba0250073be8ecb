import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// A merchant's team (issue 43, points 1 and 3; domain/dashboard-roles.ts says what each role may do).
//  - dashboard_users.role: every member has one. Users from before had every power, so they become
//    owners (nobody loses access by this migration); the default is dropped afterwards so that an
//    insert that forgets the role fails instead of making an owner.
//  - dashboard_sessions: what a member sees of each session on the sessions page. public_id names a
//    session in the forms that end it (its id_hash never leaves the database); user_agent and ip are
//    the browser and address it signed in from, cut to a bounded length.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `ALTER TABLE dashboard_users ADD COLUMN role text NOT NULL DEFAULT 'owner'
       CHECK (role IN ('owner', 'admin', 'developer', 'finance', 'viewer'))`,
    `ALTER TABLE dashboard_users ALTER COLUMN role DROP DEFAULT`,
    `ALTER TABLE dashboard_sessions ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid()`,
    `CREATE UNIQUE INDEX dashboard_sessions_public_id ON dashboard_sessions (public_id)`,
    `ALTER TABLE dashboard_sessions ADD COLUMN user_agent text CHECK (length(user_agent) <= 500)`,
    `ALTER TABLE dashboard_sessions ADD COLUMN ip text CHECK (length(ip) <= 100)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'ALTER TABLE dashboard_sessions DROP COLUMN ip',
    'ALTER TABLE dashboard_sessions DROP COLUMN user_agent',
    'ALTER TABLE dashboard_sessions DROP COLUMN public_id',
    'ALTER TABLE dashboard_users DROP COLUMN role',
  ]);
}
