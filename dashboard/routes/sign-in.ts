// The public pages, before sign-in: signing in, and setting a password from an invitation. No
// session yet, so a pre-session CSRF token (cookie + hidden field) protects these forms.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { CSRF_FIELD, newToken, tokensMatch } from '../csrf.ts';
import { currentSession, preSessionCookieName, readCookie, setCookie, startSession } from '../session.ts';
import { acceptInvite, signIn, userByInvite } from '../../commands/dashboard-users.ts';
import { passwordProblem } from '../../infra/passwords.ts';
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

const linkNotValid = () => messagePage('Link not valid', 'This link is invalid, already used or expired. Ask your payments operator for a new one.');

export function addSignInRoutes(r: Router, s: ApiServices): void {
  r.get('/sign-in', async (req, res) => {
    if (await currentSession(s, req, locals(res).secure)) return res.redirect(303, BASE);
    send(res, 200, signInPage(preToken(req, res), { info: done(req) }));
  });

  r.post('/sign-in', async (req, res) => {
    if (!preTokenOk(req, res)) return send(res, 403, signInPage(preToken(req, res), { error: 'Your sign-in form had expired. Please try again.' }));
    const result = await signIn(s, field(req, 'email'), field(req, 'password'));
    if (!result.ok) {
      const error = result.reason === 'locked'
        ? 'Too many failed sign-ins for this address. Try again in 15 minutes.'
        : 'That e-mail address and password do not match an account.';
      return send(res, result.reason === 'locked' ? 429 : 401, signInPage(preToken(req, res), { error, email: field(req, 'email').slice(0, 254) }));
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
    if (!user) return send(res, 404, linkNotValid());
    send(res, 200, setPasswordPage(preToken(req, res), token, user.email));
  });

  r.post('/invite', async (req, res) => {
    const token = field(req, 'token');
    const user = await userByInvite(s, token);
    if (!user) return send(res, 404, linkNotValid());
    if (!preTokenOk(req, res)) return send(res, 403, setPasswordPage(preToken(req, res), token, user.email, 'The form had expired. Please try again.'));
    const password = field(req, 'password');
    const problem = passwordProblem(password, user.email)
      ?? (password !== field(req, 'password_confirm') ? 'The two passwords differ.' : undefined);
    if (problem) return send(res, 400, setPasswordPage(preToken(req, res), token, user.email, problem));
    if (!(await acceptInvite(s, token, password))) return send(res, 404, messagePage('Link not valid', 'This link was used or has expired.'));
    res.redirect(303, `${BASE}/sign-in?done=password_set`);
  });
}
