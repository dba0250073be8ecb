// The public pages, before sign-in: signing in, and setting a password from an invitation. No
// session yet, so a pre-session CSRF token (cookie + hidden field) protects these forms.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { CSRF_FIELD, newToken, tokensMatch } from '../csrf.ts';
import { currentSession, preSessionCookieName, readCookie, setCookie, startSession } from '../session.ts';
import { acceptInvite, signIn, userByInvite } from '../../commands/dashboard-users.ts';
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, passwordProblem } from '../../infra/passwords.ts';
import type { Speech } from '../language.ts';
import { BASE } from '../pages/layout.ts';
import { messagePage, setPasswordPage, signInPage } from '../pages/auth.ts';
import { done, field, locals, query, send } from '../http.ts';

/** The pre-session token: the one in the cookie, else a new one set in it. */
function preToken(req: Request, res: Response): string {
  const name = preSessionCookieName(locals(res).secure);
  const existing = readCookie(req, name);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = newToken();
  setCookie(res, name, token, locals(res).secure);
  return token;
}

const preTokenOk = (req: Request, res: Response) => tokensMatch(readCookie(req, preSessionCookieName(locals(res).secure)), field(req, CSRF_FIELD));

const linkNotValid = (v: Speech) => messagePage(v, v.t('dash.link_invalid.title'), v.t('dash.link_invalid.text'));

/** What is wrong with the new password, in the page's language (passwordProblem decides; this names its rule). */
function passwordRefusal(v: Speech, password: string, confirm: string, email: string): string | undefined {
  if (passwordProblem(password, email) !== undefined) {
    if (password.length < MIN_PASSWORD_CHARS) return v.t('dash.password.too_short', { min: MIN_PASSWORD_CHARS });
    if (password.length > MAX_PASSWORD_CHARS) return v.t('dash.password.too_long', { max: MAX_PASSWORD_CHARS });
    return v.t('dash.password.is_email');
  }
  return password === confirm ? undefined : v.t('dash.password.differ');
}

export function addSignInRoutes(r: Router, s: ApiServices): void {
  r.get('/sign-in', async (req, res) => {
    if (await currentSession(s, req, locals(res).secure)) return res.redirect(303, BASE);
    send(res, 200, signInPage(locals(res), preToken(req, res), { info: done(req, res) }));
  });

  r.post('/sign-in', async (req, res) => {
    const v = locals(res);
    if (!preTokenOk(req, res)) return send(res, 403, signInPage(v, preToken(req, res), { error: v.t('dash.signin.expired') }));
    const result = await signIn(s, field(req, 'email'), field(req, 'password'));
    if (!result.ok) {
      const error = v.t(result.reason === 'locked' ? 'dash.signin.locked' : 'dash.signin.mismatch');
      return send(res, result.reason === 'locked' ? 429 : 401, signInPage(v, preToken(req, res), { error, email: field(req, 'email').slice(0, 254) }));
    }
    await startSession(s, res, locals(res).secure, result.user);
    setCookie(res, preSessionCookieName(locals(res).secure), '', locals(res).secure, 0);
    res.redirect(303, BASE);
  });

  // The invitation link is /dashboard/invite?token=…: in the query, not the path, so request logs
  // (which record the path) never hold it.
  r.get('/invite', async (req, res) => {
    const token = query(req, 'token') ?? '';
    const user = await userByInvite(s, token);
    if (!user) return send(res, 404, linkNotValid(locals(res)));
    send(res, 200, setPasswordPage(locals(res), preToken(req, res), token, user.email));
  });

  r.post('/invite', async (req, res) => {
    const token = field(req, 'token');
    const user = await userByInvite(s, token);
    const v = locals(res);
    if (!user) return send(res, 404, linkNotValid(v));
    if (!preTokenOk(req, res)) return send(res, 403, setPasswordPage(v, preToken(req, res), token, user.email, v.t('dash.password.expired')));
    const password = field(req, 'password');
    const problem = passwordRefusal(v, password, field(req, 'password_confirm'), user.email);
    if (problem) return send(res, 400, setPasswordPage(v, preToken(req, res), token, user.email, problem));
    if (!(await acceptInvite(s, token, password))) return send(res, 404, messagePage(v, v.t('dash.link_invalid.title'), v.t('dash.link_invalid.used')));
    res.redirect(303, `${BASE}/sign-in?done=password_set`);
  });
}
