// Dashboard users: invitations (a one-time set-password link), passwords, and sign-in with a
// lockout. Tokens are stored only as SHA-256 digests; passwords only as scrypt hashes.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Services } from './services.ts';
import { DomainError } from '../domain/errors.ts';
import { hashPassword, verifyAgainstNothing, verifyPassword } from '../infra/passwords.ts';
import { countFailure } from './lockouts.ts';
import type { Role } from '../domain/dashboard-roles.ts';
import { checkTeamChange, lockOwners, type TeamActor } from './dashboard-team.ts';

export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;
export const MAX_FAILED_SIGN_INS = 5;
export const LOCKOUT_MS = 15 * 60 * 1000;
/** Failures older than this are forgotten: the lockout counts failures close together. */
const FAILURE_MEMORY_MS = LOCKOUT_MS;
const EMAIL = /^[^\s@<>()",;:]{1,64}@[A-Za-z0-9.-]{1,189}\.[A-Za-z]{2,63}$/;

export interface DashboardUser {
  id: string;
  merchant_id: string;
  email: string;
  role: Role;
  password_hash: string | null;
  password_set_at: Date | string | null;
  invite_expires_at: Date | string | null;
  last_sign_in_at: Date | string | null;
  created_at: Date | string;
}

export const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

/** Lower-cased and trimmed, or undefined when it is not an e-mail address. */
export function normalizeEmail(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const email = raw.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** The operator API's view of a user (never a hash). */
export function userView(u: DashboardUser) {
  return {
    id: u.id, merchant_id: u.merchant_id, email: u.email, role: u.role,
    status: u.password_hash ? 'active' : 'invited',
    created_at: iso(u.created_at), password_set_at: iso(u.password_set_at), last_sign_in_at: iso(u.last_sign_in_at),
  };
}

/**
 * Creates the user (or, for an address the merchant already has, issues a new invitation: the way to
 * reset a forgotten password) and answers the one-time invitation token. An address another
 * merchant uses is refused. `role`: a new user's (default owner, as the operator invites the first
 * one); an existing user keeps theirs unless one is given. A new invitation for an existing user ends
 * their sessions at once (a reset is asked when the password may be known to someone else). `by`:
 * who invites, checked against the team's rules (commands/dashboard-team.ts).
 */
export async function inviteUser(s: Services, merchantId: string, rawEmail: string, role?: Role, by: TeamActor = 'operator') {
  const email = normalizeEmail(rawEmail);
  if (!email) throw new DomainError('bad_request', 'Invalid e-mail address', [{ field: 'email', message: 'must be an e-mail address' }]);
  const merchant = await s.knex('merchants').where({ id: merchantId }).first('id');
  if (!merchant) throw new DomainError('not_found', 'Merchant not found');
  const token = randomBytes(32).toString('base64url');
  const now = s.clock.now();
  const expiresAt = new Date(now.getTime() + INVITE_TTL_MS);
  const row = await s.knex.transaction(async (tx) => {
    const owners = await lockOwners(tx, merchantId);
    const existing = (await tx('dashboard_users').where({ email }).forUpdate().first()) as DashboardUser | undefined;
    if (existing && existing.merchant_id !== merchantId) {
      throw new DomainError('bad_request', 'This e-mail address is already used by another merchant', [{ field: 'email', message: 'already in use' }]);
    }
    checkTeamChange(owners, by, existing?.role, role ?? existing?.role ?? 'owner');
    if (existing) return reinvite(tx, existing, role, { invite_token_hash: sha256(token), invite_expires_at: expiresAt });
    const [u] = await tx('dashboard_users').insert({
      id: randomUUID(), merchant_id: merchantId, email, role: role ?? 'owner', invite_token_hash: sha256(token), invite_expires_at: expiresAt, created_at: now,
    }).returning('*');
    return u as DashboardUser;
  });
  return { user: row, token, expiresAt };
}

/** A new invitation for an existing user (checked by the caller): their sessions end, their role changes only when one is given. */
async function reinvite(tx: Knex.Transaction, existing: DashboardUser, role: Role | undefined, invite: Record<string, unknown>): Promise<DashboardUser> {
  const [u] = await tx('dashboard_users').where({ id: existing.id }).update({ ...invite, role: role ?? existing.role }).returning('*');
  await tx('dashboard_sessions').where({ user_id: existing.id }).delete();
  return u as DashboardUser;
}

export async function listUsers(knex: Knex, merchantId: string): Promise<DashboardUser[]> {
  return (await knex('dashboard_users').where({ merchant_id: merchantId }).orderBy('created_at')) as DashboardUser[];
}

/** The user an unexpired invitation token belongs to. */
export async function userByInvite(s: Services, token: string): Promise<DashboardUser | undefined> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
  const u = (await s.knex('dashboard_users').where({ invite_token_hash: sha256(token) }).first()) as DashboardUser | undefined;
  if (!u || !u.invite_expires_at || new Date(u.invite_expires_at).getTime() <= s.clock.now().getTime()) return undefined;
  return u;
}

/** Sets the password from an invitation: the token is used up and every existing session ends. */
export async function acceptInvite(s: Services, token: string, password: string): Promise<DashboardUser | undefined> {
  const hash = await hashPassword(password);
  const now = s.clock.now();
  return s.knex.transaction(async (tx) => {
    const [u] = (await tx('dashboard_users')
      .where({ invite_token_hash: sha256(token) }).andWhere('invite_expires_at', '>', now)
      .update({ password_hash: hash, password_set_at: now, invite_token_hash: null, invite_expires_at: null })
      .returning('*')) as DashboardUser[];
    if (!u) return undefined;
    await tx('dashboard_sessions').where({ user_id: u.id }).delete();
    await tx('dashboard_sign_in_failures').where({ email: u.email }).delete();
    return u;
  });
}

export type SignInResult = { ok: true; user: DashboardUser } | { ok: false; reason: 'invalid' | 'locked' };

/**
 * Email and password. Every address, known or not, has the same failure count and lockout and costs
 * the same scrypt time, so neither the answer nor its timing says whether an account exists.
 */
export async function signIn(s: Services, rawEmail: unknown, password: unknown): Promise<SignInResult> {
  const email = normalizeEmail(rawEmail) ?? (typeof rawEmail === 'string' ? rawEmail.trim().toLowerCase().slice(0, 254) : '');
  const pw = typeof password === 'string' ? password.slice(0, 200) : '';
  const now = s.clock.now();
  const failures = await s.knex('dashboard_sign_in_failures').where({ email }).first('locked_until');
  if (failures?.locked_until && new Date(failures.locked_until).getTime() > now.getTime()) {
    await verifyAgainstNothing(pw);
    return { ok: false, reason: 'locked' };
  }
  const user = (await s.knex('dashboard_users').where({ email }).first()) as DashboardUser | undefined;
  const ok = user?.password_hash ? await verifyPassword(pw, user.password_hash) : await verifyAgainstNothing(pw);
  if (ok && user) {
    await s.knex('dashboard_sign_in_failures').where({ email }).delete();
    await s.knex('dashboard_users').where({ id: user.id }).update({ last_sign_in_at: now });
    return { ok: true, user };
  }
  return { ok: false, reason: (await recordFailure(s.knex, email, now)) ? 'locked' : 'invalid' };
}

/** Counts one failure; true when it locks the address. */
function recordFailure(knex: Knex, email: string, now: Date): Promise<boolean> {
  return countFailure(knex, { table: 'dashboard_sign_in_failures', key: 'email' }, email, MAX_FAILED_SIGN_INS, FAILURE_MEMORY_MS, now);
}
