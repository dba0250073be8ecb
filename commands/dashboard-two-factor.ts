// Two-factor sign-in for dashboard members (issue 43 point 2): enrolment with a TOTP secret (RFC 6238,
// infra/totp.ts), sealed at rest with the server key as webhook signing secrets are, ten one-time
// recovery codes kept only as an HMAC under the server key, and the owner's "required for everyone".
// A code is accepted once: the step of the last accepted code is kept, and only a later step passes.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Services } from './services.ts';
import type { DashboardUser } from './dashboard-users.ts';
import { matchingTimeStep, newTotpSecret } from '../infra/totp.ts';

export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** Two groups of five base32 characters: 50 random bits each, typed from paper. */
const RECOVERY_CODE = /^[a-z2-7]{10}$/;

type Deps = Pick<Services, 'knex' | 'secrets' | 'clock'>;

interface TwoFactorRow {
  user_id: string;
  secret_sealed: string;
  enrolled_at: Date | string | null;
  last_time_step: string | number | null;
}

export interface TwoFactorState {
  enrolled: boolean;
  enrolledAt: string | null;
  recoveryCodesLeft: number;
  required: boolean;
}

const rowOf = (knex: Knex, userId: string) => knex('dashboard_two_factor').where({ user_id: userId }).first() as Promise<TwoFactorRow | undefined>;

export async function requiredFor(knex: Knex, merchantId: string): Promise<boolean> {
  const row = await knex('dashboard_merchant_settings').where({ merchant_id: merchantId }).first('require_two_factor');
  return row?.require_two_factor === true;
}

export async function isEnrolled(knex: Knex, userId: string): Promise<boolean> {
  const row = await rowOf(knex, userId);
  return row?.enrolled_at != null;
}

export async function twoFactorState(knex: Knex, userId: string, merchantId: string): Promise<TwoFactorState> {
  const [row, required, left] = await Promise.all([
    rowOf(knex, userId), requiredFor(knex, merchantId),
    knex('dashboard_recovery_codes').where({ user_id: userId }).whereNull('used_at').count<Array<{ count: string }>>('* as count'),
  ]);
  const enrolledAt = row?.enrolled_at == null ? null : new Date(row.enrolled_at).toISOString();
  return { enrolled: enrolledAt !== null, enrolledAt, recoveryCodesLeft: Number(left[0]?.count ?? 0), required };
}

/**
 * The secret a member not yet enrolled is shown (the same one on every visit until confirmed, so a
 * reload does not invalidate the QR code already scanned); undefined once enrolled.
 */
export async function secretToEnrol(s: Deps, userId: string): Promise<string | undefined> {
  const existing = await rowOf(s.knex, userId);
  if (existing) return existing.enrolled_at == null ? s.secrets.decrypt(existing.secret_sealed) : undefined;
  await s.knex('dashboard_two_factor')
    .insert({ user_id: userId, secret_sealed: s.secrets.encrypt(newTotpSecret()), created_at: s.clock.now() })
    .onConflict('user_id').ignore();
  return secretToEnrol(s, userId);
}

function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  return [...bytes].map((b) => RECOVERY_ALPHABET[b & 31]).join('');
}

/** As printed: two groups of five. */
export const formatRecoveryCode = (code: string) => `${code.slice(0, 5)}-${code.slice(5)}`;
/** As typed: case, spaces and the hyphen do not matter. */
const normalise = (typed: string) => typed.toLowerCase().replace(/[\s-]/g, '');

/**
 * The first valid code confirms enrolment: the member is enrolled, that step is used, and ten new
 * recovery codes are answered (in clear this once; stored as HMACs). Undefined for a wrong code or a
 * member already enrolled.
 */
export async function confirmEnrolment(s: Deps, userId: string, code: string): Promise<string[] | undefined> {
  const now = s.clock.now();
  return s.knex.transaction(async (tx) => {
    const row = (await tx('dashboard_two_factor').where({ user_id: userId }).forUpdate().first()) as TwoFactorRow | undefined;
    if (!row || row.enrolled_at != null) return undefined;
    const step = matchingTimeStep(s.secrets.decrypt(row.secret_sealed), code.replace(/\s/g, ''), now.getTime());
    if (step === undefined) return undefined;
    await tx('dashboard_two_factor').where({ user_id: userId }).update({ enrolled_at: now, last_time_step: step });
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await tx('dashboard_recovery_codes').where({ user_id: userId }).delete();
    await tx('dashboard_recovery_codes').insert(codes.map((c) => ({ user_id: userId, code_hash: s.secrets.hash(c) })));
    return codes.map(formatRecoveryCode);
  });
}

/** A TOTP code of a step later than the last one accepted; that step is then used. */
async function acceptTotp(s: Deps, userId: string, code: string): Promise<boolean> {
  const row = await rowOf(s.knex, userId);
  if (!row || row.enrolled_at == null) return false;
  const step = matchingTimeStep(s.secrets.decrypt(row.secret_sealed), code, s.clock.now().getTime());
  if (step === undefined) return false;
  // One statement: two requests with the same code at once cannot both pass.
  const updated = await s.knex('dashboard_two_factor').where({ user_id: userId }).whereNotNull('enrolled_at')
    .andWhere((q) => q.whereNull('last_time_step').orWhere('last_time_step', '<', step))
    .update({ last_time_step: step });
  return updated === 1;
}

/** An unused recovery code of this member; it is then used up. */
async function acceptRecoveryCode(s: Deps, userId: string, code: string): Promise<boolean> {
  const used = await s.knex('dashboard_recovery_codes').where({ user_id: userId, code_hash: s.secrets.hash(code) }).whereNull('used_at')
    .update({ used_at: s.clock.now() });
  return used === 1;
}

/** The second factor at sign-in (or to turn 2FA off): a 6-digit code or a recovery code, each good once. */
export async function acceptSecondFactor(s: Deps, userId: string, typed: string): Promise<boolean> {
  const code = normalise(typed.slice(0, 40));
  if (/^[0-9]{6}$/.test(code)) return acceptTotp(s, userId, code);
  if (RECOVERY_CODE.test(code)) return acceptRecoveryCode(s, userId, code);
  return false;
}

/** Turns 2FA off for a member: the secret and the recovery codes go. */
export async function removeTwoFactor(knex: Knex, userId: string): Promise<void> {
  await knex.transaction(async (tx) => {
    await tx('dashboard_recovery_codes').where({ user_id: userId }).delete();
    await tx('dashboard_two_factor').where({ user_id: userId }).delete();
  });
}

/**
 * The operator's way back for a member who lost both their phone and their recovery codes: the
 * member's 2FA goes (secret, recovery codes, a sign-in waiting for a code) and so do their sessions,
 * all in one transaction. The member signs in with the password alone, or is sent to enrol again
 * when the team requires it. Answers the user's row (the reset leaves it as it was); undefined for a
 * user that is not the merchant's.
 */
export async function resetTwoFactor(knex: Knex, merchantId: string, userId: string): Promise<DashboardUser | undefined> {
  return knex.transaction(async (tx) => {
    const user = (await tx('dashboard_users').where({ id: userId, merchant_id: merchantId }).forUpdate().first()) as DashboardUser | undefined;
    if (!user) return undefined;
    for (const table of ['dashboard_recovery_codes', 'dashboard_two_factor', 'dashboard_pending_sign_ins', 'dashboard_sessions']) {
      await tx(table).where({ user_id: userId }).delete();
    }
    return user;
  });
}

export async function setRequired(s: Deps, merchantId: string, required: boolean): Promise<void> {
  await s.knex('dashboard_merchant_settings')
    .insert({ merchant_id: merchantId, require_two_factor: required, updated_at: s.clock.now() })
    .onConflict('merchant_id').merge(['require_two_factor', 'updated_at']);
}

/** True when the member's team requires 2FA and the member has not enrolled: one query, asked on every signed-in request. */
export async function mustEnrol(knex: Knex, userId: string, merchantId: string): Promise<boolean> {
  const r = await knex.raw<{ rows: Array<{ must: boolean }> }>(
    `SELECT EXISTS (SELECT 1 FROM dashboard_merchant_settings WHERE merchant_id = ? AND require_two_factor)
        AND NOT EXISTS (SELECT 1 FROM dashboard_two_factor WHERE user_id = ? AND enrolled_at IS NOT NULL) AS must`,
    [merchantId, userId],
  );
  return r.rows[0]?.must === true;
}
