import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// The audit log (CONTRACT §18, issue 43 point 4): the read model of the `audit-<merchant id>` and
// `audit-operator` streams (projections/audit-log.ts), what GET /admin/audit-log and the dashboard's
// audit page list, newest first by (at, id). One row per `audit.recorded` event, written once and
// never changed; rebuilt from the events like every read model. merchant_id is null for a change
// that names no merchant (an operator's availability, a projection's rebuild).
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE audit_log (
      id uuid PRIMARY KEY,
      merchant_id uuid,
      at timestamptz NOT NULL,
      actor_type text NOT NULL,
      actor_id text NOT NULL,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text NOT NULL,
      request_id text NOT NULL,
      ip text NOT NULL
    )`,
    'CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC)',
    'CREATE INDEX audit_log_merchant_at ON audit_log (merchant_id, at DESC, id DESC)',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS audit_log');
}
