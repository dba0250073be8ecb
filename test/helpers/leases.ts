// What PostgreSQL says of the leases (infra/session-lease.ts) on the test's database.
import type { Knex } from 'knex';
import { LEASE_APPLICATION_NAME } from '../../infra/session-lease.ts';

/** Sessions holding the lease `key` (a one-number advisory lock: its high and low 32 bits) on this database. */
export async function leaseHolders(knex: Knex, key: number): Promise<number> {
  const r = await knex.raw<{ rows: Array<{ n: string }> }>(
    `SELECT count(*) AS n FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND (classid::bigint << 32) | objid::bigint = ?
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, [key]);
  return Number(r.rows[0]!.n);
}

/** The leases' sessions on this database: when each started (a connection per try would change them). */
export async function leaseSessions(knex: Knex): Promise<string[]> {
  const r = await knex.raw<{ rows: Array<{ started: string }> }>(
    `SELECT backend_start::text AS started FROM pg_stat_activity
      WHERE application_name = ? AND datname = current_database() ORDER BY backend_start`, [LEASE_APPLICATION_NAME]);
  return r.rows.map((row) => row.started);
}
