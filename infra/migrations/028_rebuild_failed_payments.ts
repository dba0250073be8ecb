import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 41 point 5 (CONTRACT §15): a failed payment's view now answers `failure_reason` from the
// contract's list and `provider_failure`. Rows projected before keep the provider's raw code until
// their projection is rebuilt from the events, which fold to the new view. The service rebuilds the
// projections named here online at its next start (workers/due-rebuilds.ts: the live tables keep
// answering until the rebuilt ones are swapped in), and only where a failed payment exists: a new or
// failure-free database has nothing to redo.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE projection_rebuilds_due (
      name text PRIMARY KEY,
      reason text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `INSERT INTO projection_rebuilds_due (name, reason)
     SELECT 'money', 'failure_reason and provider_failure on failed payins and payouts'
     WHERE EXISTS (SELECT 1 FROM payins WHERE status = 'failed') OR EXISTS (SELECT 1 FROM payouts WHERE status = 'failed')`,
    `INSERT INTO projection_rebuilds_due (name, reason)
     SELECT 'transfers', 'failure_reason and provider_failure on failed transfers and legs'
     WHERE EXISTS (SELECT 1 FROM transfers WHERE position('"failure_reason": "' IN body::text) > 0)`,
    `INSERT INTO projection_rebuilds_due (name, reason)
     SELECT 'refunds', 'failure_reason and provider_failure on failed refunds'
     WHERE EXISTS (SELECT 1 FROM refunds WHERE status = 'failed')`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE projection_rebuilds_due']);
}
