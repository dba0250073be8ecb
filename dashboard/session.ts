// Dashboard sessions: a random 32-byte id in an HttpOnly, SameSite=Strict cookie (Secure and
// `__Host-`-named over https), kept in the database only as its SHA-256, ending after
// DASHBOARD_SESSION_IDLE_MINUTES without a request, after MAX_SESSION_MS in any case, and at
// sign-out. Each session has its own CSRF token. Each row also keeps, for the member's sessions page
// (member-sessions.ts), the browser (User-Agent) and address it signed in from, and a public id that
// names it in the forms that end it.
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { newToken } from './csrf.ts';
import { sha256 } from '../commands/dashboard-users.ts';
import type { Role } from '../domain/dashboard-roles.ts';

export const MAX_SESSION_MS = 7 * 24 * 3600 * 1000;
/** The idle expiry is pushed back at most this often (one write per session per minute). */
const TOUCH_EVERY_MS = 60_000;

export interface Session {
  idHash: string;
  userId: string;
  merchantId: string;
  email: string;
  /** Read with the session on every request: a role changed or a member removed holds from their next request. */
  role: Role;
  /** The id the sessions page names this session by (never the cookie, never its hash). */
  publicId: string;
  merchantName: string;
  csrfToken: string;
}

const MAX_USER_AGENT_CHARS = 500;

/** Where a sign-in came from, for the sessions page: the request's User-Agent and address (as the API logs them: the socket's peer). */
function origin(res: Response): { user_agent: string | null; ip: string | null } {
  const req = res.req as Request | undefined;
  const ua = req?.header('user-agent');
  const ip = req?.socket.remoteAddress;
  return { user_agent: ua ? ua.slice(0, MAX_USER_AGENT_CHARS) : null, ip: ip ? ip.replace(/^::ffff:/, '').slice(0, 100) : null };
}

export function secureCookies(s: ApiServices, req: Request): boolean {
  const mode = s.config.dashboardCookieSecure;
  return mode === 'always' || (mode === 'auto' && req.secure);
}

export const sessionCookieName = (secure: boolean) => (secure ? '__Host-mpa_session' : 'mpa_session');
export const preSessionCookieName = (secure: boolean) => (secure ? '__Host-mpa_presession' : 'mpa_presession');

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.header('cookie') ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export function setCookie(res: Response, name: string, value: string, secure: boolean, maxAgeSeconds?: number): void {
  const attrs = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (secure) attrs.push('Secure');
  if (maxAgeSeconds !== undefined) attrs.push(`Max-Age=${maxAgeSeconds}`);
  res.append('Set-Cookie', attrs.join('; '));
}

export async function startSession(s: ApiServices, res: Response, secure: boolean, user: { id: string; merchant_id: string }): Promise<void> {
  const id = randomBytes(32).toString('base64url');
  const now = s.clock.now();
  // Old sessions are cleared here rather than by a job: sign-ins are rare, the index makes it cheap.
  await s.knex('dashboard_sessions').where('expires_at', '<', now).delete();
  await s.knex('dashboard_sessions').insert({
    id_hash: sha256(id), user_id: user.id, merchant_id: user.merchant_id, csrf_token: newToken(), ...origin(res),
    created_at: now, last_seen_at: now, expires_at: new Date(now.getTime() + idleMs(s)),
  });
  setCookie(res, sessionCookieName(secure), id, secure);
}

const idleMs = (s: ApiServices) => s.config.dashboardSessionIdleMinutes * 60_000;

/** The session the request's cookie names, if it is still valid (its idle expiry is pushed back). */
export async function currentSession(s: ApiServices, req: Request, secure: boolean): Promise<Session | undefined> {
  const id = readCookie(req, sessionCookieName(secure));
  if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
  const row = await s.knex('dashboard_sessions as s')
    .join('dashboard_users as u', 'u.id', 's.user_id')
    .leftJoin('merchants as m', 'm.id', 's.merchant_id')
    .where('s.id_hash', sha256(id))
    .first('s.id_hash', 's.user_id', 's.merchant_id', 's.csrf_token', 's.created_at', 's.last_seen_at', 's.expires_at', 's.public_id', 'u.email', 'u.role', 'm.name as merchant_name');
  if (!row) return undefined;
  const now = s.clock.now().getTime();
  if (new Date(row.expires_at).getTime() <= now || new Date(row.created_at).getTime() + MAX_SESSION_MS <= now) {
    await s.knex('dashboard_sessions').where({ id_hash: row.id_hash }).delete();
    return undefined;
  }
  if (now - new Date(row.last_seen_at).getTime() >= TOUCH_EVERY_MS) {
    await s.knex('dashboard_sessions').where({ id_hash: row.id_hash })
      .update({ last_seen_at: new Date(now), expires_at: new Date(now + idleMs(s)) });
  }
  return {
    idHash: row.id_hash, userId: row.user_id, merchantId: row.merchant_id, email: row.email, role: row.role, publicId: row.public_id,
    merchantName: row.merchant_name ?? '', csrfToken: row.csrf_token,
  };
}

export async function endSession(s: ApiServices, res: Response, secure: boolean, session: Session | undefined): Promise<void> {
  if (session) await s.knex('dashboard_sessions').where({ id_hash: session.idHash }).delete();
  setCookie(res, sessionCookieName(secure), '', secure, 0);
}
