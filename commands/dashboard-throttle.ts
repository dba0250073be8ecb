// Brute force on the dashboard's sign-in, counted per subject: a member's second-factor codes
// ("member:<id>"), and what one network address tries, codes ("code-address:<ip>") and passwords
// ("password-address:<ip>"). The password lockout per e-mail address stays in dashboard-users.ts;
// this is the same rule (failures close together lock for LOCKOUT_MS) in a table of its own, so an
// e-mail typed on the sign-in form can never name one of these subjects.
import type { Knex } from 'knex';
import { LOCKOUT_MS } from './dashboard-users.ts';
import { countFailure } from './lockouts.ts';

/** A 6-digit code is one in a million: five tries per member, then 15 minutes (as passwords). */
export const MAX_FAILED_CODES_PER_MEMBER = 5;
/** An office behind one address has several members: more room, still far from a million. */
export const MAX_FAILURES_PER_ADDRESS = 20;
export { LOCKOUT_MS };

export const memberSubject = (userId: string) => `member:${userId}`;
export const codeAddressSubject = (ip: string) => `code-address:${ip.slice(0, 100)}`;
export const passwordAddressSubject = (ip: string) => `password-address:${ip.slice(0, 100)}`;

/** True when any of the subjects is locked now. */
export async function anyLocked(knex: Knex, subjects: string[], now: Date): Promise<boolean> {
  const row = await knex('dashboard_two_factor_failures').whereIn('subject', subjects).where('locked_until', '>', now).first('subject');
  return row !== undefined;
}

/** Counts one failure against the subject; true when it locks it. */
export function recordFailure(knex: Knex, subject: string, limit: number, now: Date): Promise<boolean> {
  return countFailure(knex, { table: 'dashboard_two_factor_failures', key: 'subject' }, subject, limit, LOCKOUT_MS, now);
}

/** A correct code forgets the member's failures (never the address's: one good account must not reset them). */
export async function forgetFailures(knex: Knex, subject: string): Promise<void> {
  await knex('dashboard_two_factor_failures').where({ subject }).delete();
}
