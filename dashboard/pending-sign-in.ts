// The step between a correct password and a correct second factor: a random id in a cookie of its
// own (HttpOnly, SameSite=Strict, `__Host-` over https), kept in the database only as its SHA-256, for
// PENDING_MS. It starts no session: with it a browser may only send a code (routes/sign-in.ts).
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { readCookie, setCookie } from './session.ts';
import { sha256 } from '../commands/dashboard-users.ts';

/** Long enough to open an authenticator app and type a code; short enough that a password alone is worth little. */
export const PENDING_MS = 5 * 60 * 1000;

const cookieName = (secure: boolean) => (secure ? '__Host-mpa_pending' : 'mpa_pending');

export async function startPendingSignIn(s: ApiServices, res: Response, secure: boolean, userId: string): Promise<void> {
  const id = randomBytes(32).toString('base64url');
  const now = s.clock.now();
  // Cleared here rather than by a job, as expired sessions are: password sign-ins are rare.
  await s.knex('dashboard_pending_sign_ins').where('expires_at', '<', now).delete();
  await s.knex('dashboard_pending_sign_ins').insert({ id_hash: sha256(id), user_id: userId, expires_at: new Date(now.getTime() + PENDING_MS) });
  setCookie(res, cookieName(secure), id, secure, PENDING_MS / 1000);
}

export interface PendingSignIn {
  idHash: string;
  user: { id: string; merchant_id: string };
}

/** The pending sign-in the request's cookie names, if it has not expired. */
export async function pendingSignIn(s: ApiServices, req: Request, secure: boolean): Promise<PendingSignIn | undefined> {
  const id = readCookie(req, cookieName(secure));
  if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
  const row = await s.knex('dashboard_pending_sign_ins as p').join('dashboard_users as u', 'u.id', 'p.user_id')
    .where('p.id_hash', sha256(id)).where('p.expires_at', '>', s.clock.now())
    .first('p.id_hash', 'u.id', 'u.merchant_id');
  return row ? { idHash: row.id_hash, user: { id: row.id, merchant_id: row.merchant_id } } : undefined;
}

export async function endPendingSignIn(s: ApiServices, res: Response, secure: boolean, pending: PendingSignIn | undefined): Promise<void> {
  if (pending) await s.knex('dashboard_pending_sign_ins').where({ id_hash: pending.idHash }).delete();
  setCookie(res, cookieName(secure), '', secure, 0);
}
