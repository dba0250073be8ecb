// The pre-session CSRF token of the public forms (sign-in, the code step, set-password): a random
// token in the pre-session cookie, repeated in the form's hidden field.
import type { Request, Response } from 'express';
import { CSRF_FIELD, newToken, tokensMatch } from './csrf.ts';
import { preSessionCookieName, readCookie, setCookie } from './session.ts';
import { field, locals } from './http.ts';

/** The pre-session token: the one in the cookie, else a new one set in it. */
export function preToken(req: Request, res: Response): string {
  const name = preSessionCookieName(locals(res).secure);
  const existing = readCookie(req, name);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = newToken();
  setCookie(res, name, token, locals(res).secure);
  return token;
}

export const preTokenOk = (req: Request, res: Response) => tokensMatch(readCookie(req, preSessionCookieName(locals(res).secure)), field(req, CSRF_FIELD));

/** Signed in: the pre-session token has served its purpose. */
export const endPreToken = (res: Response) => setCookie(res, preSessionCookieName(locals(res).secure), '', locals(res).secure, 0);
