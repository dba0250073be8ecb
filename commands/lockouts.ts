// The one rule of the dashboard's lockouts (a password per e-mail address, dashboard-users.ts; codes
// and addresses, dashboard-throttle.ts): failures close together are counted, and the one that
// reaches the limit locks the key for `lockoutMs`. A failure after a quiet `lockoutMs`, or after a
// lock has run out, counts from 1 again. Each caller keeps its own table, so that what one form
// takes as a key (an e-mail address) can never name another's.
import type { Knex } from 'knex';

export interface LockoutTable {
  table: 'dashboard_sign_in_failures' | 'dashboard_two_factor_failures';
  key: 'email' | 'subject';
}

/** Counts one failure against `key`; true when it locks it. */
export async function countFailure(knex: Knex, t: LockoutTable, key: string, limit: number, lockoutMs: number, now: Date): Promise<boolean> {
  const forgetBefore = new Date(now.getTime() - lockoutMs);
  const r = await knex.raw<{ rows: Array<{ failed_attempts: number }> }>(
    `INSERT INTO ?? AS f (??, failed_attempts, locked_until, updated_at) VALUES (?, 1, NULL, ?)
     ON CONFLICT (??) DO UPDATE SET
       failed_attempts = CASE WHEN f.updated_at < ? OR (f.locked_until IS NOT NULL AND f.locked_until <= EXCLUDED.updated_at)
                              THEN 1 ELSE f.failed_attempts + 1 END,
       locked_until = NULL,
       updated_at = EXCLUDED.updated_at
     RETURNING failed_attempts`,
    [t.table, t.key, key, now, t.key, forgetBefore],
  );
  if ((r.rows[0]?.failed_attempts ?? 1) < limit) return false;
  await knex(t.table).where({ [t.key]: key }).update({ locked_until: new Date(now.getTime() + lockoutMs) });
  return true;
}
