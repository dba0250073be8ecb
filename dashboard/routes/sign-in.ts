// The public pages, before sign-in: signing in (the password, then for a member with two-step
// sign-in a code: sign-in-code.ts), and setting a password from an invitation. No session yet, so a
// pre-session CSRF token (cookie + hidden field, pre-token.ts) protects these forms.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { currentSession, startSession } from '../session.ts';
import { acceptInvite, signIn, userByInvite } from '../../commands/dashboard-users.ts';
import { isEnrolled, requiredFor } from '../../commands/dashboard-two-factor.ts';
import { MAX_FAILURES_PER_ADDRESS, anyLocked, passwordAddressSubject, recordFailure } from '../../commands/dashboard-throttle.ts';
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, passwordProblem } from '../../infra/passwords.ts';
import type { Speech } from '../language.ts';
import { BASE } from '../pages/layout.ts';
import { messagePage, setPasswordPage, signInPage } from '../pages/auth.ts';
import { done, field, locals, query, send } from '../http.ts';
import { endPreToken, preToken, preTokenOk } from '../pre-token.ts';
import { startPendingSignIn } from '../pending-sign-in.ts';
import { addSignInCodeRoutes, addressOf } from './sign-in-code.ts';

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

/**
 * The password. Throttled per e-mail address (signIn) and per network address (here, so that one
 * address cannot try a password on many accounts). Right, it starts a session, or, for a member with
 * two-step sign-in, only the pending step that asks for the code.
 */
async function passwordStep(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const refuse = (status: number, error: string) => send(res, status, signInPage(v, preToken(req, res), { error, email: field(req, 'email').slice(0, 254) }));
  if (!preTokenOk(req, res)) return send(res, 403, signInPage(v, preToken(req, res), { error: v.t('dash.signin.expired') }));
  const fromAddress = passwordAddressSubject(addressOf(req));
  if (await anyLocked(s.knex, [fromAddress], s.clock.now())) return refuse(429, v.t('tfa.signin.address_locked'));
  const result = await signIn(s, field(req, 'email'), field(req, 'password'));
  if (!result.ok) {
    if (result.reason === 'locked') return refuse(429, v.t('dash.signin.locked'));
    const locked = await recordFailure(s.knex, fromAddress, MAX_FAILURES_PER_ADDRESS, s.clock.now());
    return refuse(locked ? 429 : 401, v.t(locked ? 'tfa.signin.address_locked' : 'dash.signin.mismatch'));
  }
  if (await isEnrolled(s.knex, result.user.id)) {
    await startPendingSignIn(s, res, v.secure, result.user.id);
    return res.redirect(303, `${BASE}/sign-in/code`);
  }
  await startSession(s, res, v.secure, result.user);
  endPreToken(res);
  // The team requires 2FA and this member has none: straight to enrolment (the guard keeps them there).
  res.redirect(303, (await requiredFor(s.knex, result.user.merchant_id)) ? `${BASE}/two-factor` : BASE);
}

export function addSignInRoutes(r: Router, s: ApiServices): void {
  r.get('/sign-in', async (req, res) => {
    if (await currentSession(s, req, locals(res).secure)) return res.redirect(303, BASE);
    send(res, 200, signInPage(locals(res), preToken(req, res), { info: done(req, res) }));
  });

  r.post('/sign-in', (req, res) => passwordStep(s, req, res));
  addSignInCodeRoutes(r, s);

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
