// What every dashboard request passes before a page: security headers, the form rules for a POST,
// and (past the public pages) a session with its CSRF token checked.
import type { NextFunction, Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { CSRF_FIELD, sameOrigin, tokensMatch } from './csrf.ts';
import { currentSession } from './session.ts';
import { BASE, page } from './pages/layout.ts';
import { messagePage } from './pages/auth.ts';
import { html } from '../infra/html.ts';
import { field, locals, send } from './http.ts';

/** The origin of PUBLIC_BASE_URL, when set: a payment link's QR code is an image served there (CONTRACT §16). */
function publicOrigin(publicBaseUrl: string | undefined): string {
  if (publicBaseUrl === undefined) return '';
  try {
    return ` ${new URL(publicBaseUrl).origin}`;
  } catch {
    return '';
  }
}

export const securityHeaders = (publicBaseUrl: string | undefined) => (_req: Request, res: Response, next: NextFunction): void => {
  const images = `'self' data:${publicOrigin(publicBaseUrl)}`;
  res.setHeader('Content-Security-Policy',
    `default-src 'none'; style-src 'self'; script-src 'self'; img-src ${images}; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // The invitation link carries its token in the query: never send it to another site as a referrer.
  // (Not `no-referrer`: with it browsers send `Origin: null` on our own forms, which the origin check refuses.)
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

// Forms only: urlencoded, small. A POST from another site is refused before anything else.
export function formsOnly(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'POST') return next();
  const v = locals(res);
  if (!sameOrigin(req)) return send(res, 403, messagePage(v, v.t('dash.error.refused'), v.t('dash.error.other_site')));
  if (!req.is('application/x-www-form-urlencoded')) return send(res, 415, messagePage(v, v.t('dash.error.refused'), v.t('dash.error.form_encoding')));
  next();
}

/** Signed in from here on: the session goes on `res.locals`, and a POST must carry its CSRF token. */
export const signedIn = (s: ApiServices) => async (req: Request, res: Response, next: NextFunction): Promise<void> => {
  const v = locals(res);
  const session = await currentSession(s, req, v.secure);
  if (!session) {
    if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(303, `${BASE}/sign-in`);
    return send(res, 403, messagePage(v, v.t('dash.error.session_ended_title'), v.t('dash.error.session_ended'), { href: `${BASE}/sign-in`, label: v.t('dash.signin.submit') }));
  }
  v.session = session;
  if (req.method === 'POST' && !tokensMatch(session.csrfToken, field(req, CSRF_FIELD))) {
    return send(res, 403, page(v, v.t('dash.error.refused'), '', html`<p>${v.t('dash.error.csrf')}</p>`));
  }
  next();
};
