// The second factor's checks on a real database (commands/dashboard-two-factor.ts): enrolment
// confirmed by a first valid code, the secret sealed at rest, a code accepted once (its step and any
// earlier one refused after), recovery codes stored as HMACs and each good once, and throttling per
// member and per address (commands/dashboard-second-factor.ts).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { ManualClock } from '../infra/clock.ts';
import { Secrets } from '../infra/secrets.ts';
import { totpCodeAt } from '../infra/totp.ts';
import {
  RECOVERY_CODE_COUNT, acceptSecondFactor, confirmEnrolment, secretToEnrol, twoFactorState,
} from '../commands/dashboard-two-factor.ts';
import { checkSecondFactor } from '../commands/dashboard-second-factor.ts';
import { MAX_FAILED_CODES_PER_MEMBER, MAX_FAILURES_PER_ADDRESS, LOCKOUT_MS } from '../commands/dashboard-throttle.ts';

t.comment(`on ${dbLabel}`);

const tdb = await testDatabase();
t.teardown(() => tdb.teardown());
const knex = tdb.db.knex;
const clock = new ManualClock(new Date('2026-11-28T01:00:10Z'));
const s = { knex, clock, secrets: new Secrets('a server key of at least sixteen characters') };

async function newMember(): Promise<{ id: string; merchantId: string }> {
  const id = randomUUID();
  const merchantId = randomUUID();
  await knex('dashboard_users').insert({ id, merchant_id: merchantId, email: `${id}@example.com`, role: 'owner', created_at: clock.now() });
  return { id, merchantId };
}

/** Enrols a member: the secret and the recovery codes as the page shows them. */
async function enrolled(): Promise<{ id: string; merchantId: string; secret: string; codes: string[] }> {
  const m = await newMember();
  const secret = (await secretToEnrol(s, m.id))!;
  const codes = (await confirmEnrolment(s, m.id, totpCodeAt(secret, clock.now().getTime())))!;
  clock.advance(30_000); // past the step enrolment used
  return { ...m, secret, codes };
}

t.test('enrolment: the same secret until confirmed, sealed at rest; a wrong code confirms nothing; ten codes, as HMACs', async (t) => {
  const m = await newMember();
  const secret = (await secretToEnrol(s, m.id))!;
  t.equal(await secretToEnrol(s, m.id), secret, 'a reload shows the same secret');
  const row = await knex('dashboard_two_factor').where({ user_id: m.id }).first();
  t.notOk(row.secret_sealed.includes(secret), 'not in clear');
  t.equal(s.secrets.decrypt(row.secret_sealed), secret, 'sealed with the server key');
  const now = clock.now().getTime();
  const wrong = String((Number(totpCodeAt(secret, now)) + 1) % 1_000_000).padStart(6, '0');
  t.equal(await confirmEnrolment(s, m.id, wrong), undefined);
  t.equal((await twoFactorState(knex, m.id, m.merchantId)).enrolled, false);
  const codes = (await confirmEnrolment(s, m.id, totpCodeAt(secret, now)))!;
  t.equal(codes.length, RECOVERY_CODE_COUNT);
  t.equal(new Set(codes).size, RECOVERY_CODE_COUNT, 'all different');
  for (const c of codes) t.match(c, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
  const stored = await knex('dashboard_recovery_codes').where({ user_id: m.id }).select('code_hash');
  t.same(stored.map((r) => r.code_hash).sort(), codes.map((c) => s.secrets.hash(c.replace('-', ''))).sort(), 'only their HMACs');
  t.match(await twoFactorState(knex, m.id, m.merchantId), { enrolled: true, recoveryCodesLeft: 10, required: false });
  t.equal(await secretToEnrol(s, m.id), undefined, 'enrolled: no secret shown again');
  t.equal(await confirmEnrolment(s, m.id, totpCodeAt(secret, now + 30_000)), undefined, 'no second enrolment (no new codes)');
});

t.test('a code is accepted once: the same code again, and an earlier step\'s, are refused', async (t) => {
  const m = await enrolled();
  const now = clock.now().getTime();
  t.equal(await acceptSecondFactor(s, m.id, totpCodeAt(m.secret, now)), true, 'the current code');
  t.equal(await acceptSecondFactor(s, m.id, totpCodeAt(m.secret, now)), false, 'replayed within its window: refused');
  t.equal(await acceptSecondFactor(s, m.id, totpCodeAt(m.secret, now - 30_000)), false, 'the previous step, after a later one: refused');
  clock.advance(30_000);
  t.equal(await acceptSecondFactor(s, m.id, totpCodeAt(m.secret, now)), false, 'still refused one step later (inside the window)');
  t.equal(await acceptSecondFactor(s, m.id, ` ${totpCodeAt(m.secret, clock.now().getTime()).replace(/^(...)/, '$1 ')} `), true, 'the next step\'s code, spaces ignored');
  const [a, b] = await Promise.all([0, 1].map(async () => { clock.advance(0); return acceptSecondFactor(s, m.id, totpCodeAt(m.secret, clock.now().getTime() + 30_000)); }));
  t.same([a, b].sort(), [false, true], 'the same code twice at once: one passes');
  t.equal(await acceptSecondFactor(s, (await newMember()).id, totpCodeAt(m.secret, clock.now().getTime())), false, 'another member (not enrolled)');
});

t.test('a recovery code works once, in any case and with or without its hyphen', async (t) => {
  const m = await enrolled();
  const [first, second] = m.codes;
  t.equal(await acceptSecondFactor(s, m.id, first!.toUpperCase()), true);
  t.equal(await acceptSecondFactor(s, m.id, first!), false, 'used up');
  t.equal(await acceptSecondFactor(s, m.id, second!.replace('-', '')), true, 'without the hyphen');
  t.equal((await twoFactorState(knex, m.id, m.merchantId)).recoveryCodesLeft, 8);
  const other = await enrolled();
  t.equal(await acceptSecondFactor(s, other.id, m.codes[2]!), false, 'another member\'s code is not this member\'s');
  t.equal(await acceptSecondFactor(s, m.id, 'aaaaa-aaaaa'), false, 'a made-up code');
});

t.test('throttle: five wrong codes lock the member (even the right code) for 15 minutes; twenty lock an address', async (t) => {
  const m = await enrolled();
  const outcomes: string[] = [];
  for (let i = 0; i < MAX_FAILED_CODES_PER_MEMBER; i++) outcomes.push(await checkSecondFactor(s, m.id, '192.0.2.1', '000000'));
  t.same(outcomes, ['wrong', 'wrong', 'wrong', 'wrong', 'locked']);
  t.equal(await checkSecondFactor(s, m.id, '192.0.2.99', totpCodeAt(m.secret, clock.now().getTime())), 'locked', 'the right code, from elsewhere: still locked');
  clock.advance(LOCKOUT_MS);
  t.equal(await checkSecondFactor(s, m.id, '192.0.2.99', totpCodeAt(m.secret, clock.now().getTime())), 'ok', 'after 15 minutes');

  const address = '198.51.100.7';
  const results: string[] = [];
  // Four wrong codes each from five members: each stays under its own limit, the address reaches its.
  for (let i = 0; i < MAX_FAILURES_PER_ADDRESS / 4; i++) {
    const member = await enrolled();
    for (let j = 0; j < 4; j++) results.push(await checkSecondFactor(s, member.id, address, '000000'));
  }
  t.same(results.slice(0, -1).filter((r) => r !== 'wrong'), [], 'under the limit: wrong');
  t.equal(results.at(-1), 'locked', 'the twentieth failure from one address locks it');
  const fresh = await enrolled();
  t.equal(await checkSecondFactor(s, fresh.id, address, totpCodeAt(fresh.secret, clock.now().getTime())), 'locked', 'a member with no failure, from that address: locked');
  t.equal(await checkSecondFactor(s, fresh.id, '198.51.100.8', totpCodeAt(fresh.secret, clock.now().getTime())), 'ok', 'from another address: fine');
});
