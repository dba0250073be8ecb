// Cross-site request forgery: every form carries a synchroniser token (the session's, or before
// sign-in a random token also set as a cookie) checked on every POST in constant time; and a POST
// whose Origin (or Sec-Fetch-Site) says it came from another site is refused outright. Cookies are
// SameSite=Strict as well: three independent locks.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

export const CSRF_FIELD = 'csrf_token';

export const newToken = () => randomBytes(32).toString('base64url');

export function tokensMatch(expected: string | undefined, presented: unknown): boolean {
  if (!expected || typeof presented !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** False when the browser says the request was sent by another site. */
export function sameOrigin(req: Request): boolean {
  const site = req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.header('origin');
  if (origin === undefined) return true; // old browsers and non-browser clients: the token decides
  return origin === `${req.protocol}://${req.header('host') ?? ''}`;
}
