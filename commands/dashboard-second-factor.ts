// The second factor as sign-in (and turning 2FA off) checks it: throttled per member and per network
// address before the code is even looked at, and one answer for every wrong code (wrong, replayed,
// a recovery code already used, malformed), so a failure tells nothing about why.
import type { Services } from './services.ts';
import { acceptSecondFactor } from './dashboard-two-factor.ts';
import {
  MAX_FAILED_CODES_PER_MEMBER, MAX_FAILURES_PER_ADDRESS, anyLocked, codeAddressSubject, forgetFailures, memberSubject, recordFailure,
} from './dashboard-throttle.ts';

export type SecondFactorOutcome = 'ok' | 'wrong' | 'locked';

export async function checkSecondFactor(s: Pick<Services, 'knex' | 'secrets' | 'clock'>, userId: string, address: string, typed: string): Promise<SecondFactorOutcome> {
  const now = s.clock.now();
  const member = memberSubject(userId);
  const from = codeAddressSubject(address);
  if (await anyLocked(s.knex, [member, from], now)) return 'locked';
  if (await acceptSecondFactor(s, userId, typed)) {
    await forgetFailures(s.knex, member);
    return 'ok';
  }
  const memberLocked = await recordFailure(s.knex, member, MAX_FAILED_CODES_PER_MEMBER, now);
  const addressLocked = await recordFailure(s.knex, from, MAX_FAILURES_PER_ADDRESS, now);
  return memberLocked || addressLocked ? 'locked' : 'wrong';
}
