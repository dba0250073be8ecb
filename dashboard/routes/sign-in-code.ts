// The second step of sign-in for a member with two-step sign-in: after the right password (a pending
// sign-in, pending-sign-in.ts), the 6-digit code or a recovery code starts the session.
import type { Request, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { startSession } from '../session.ts';
import { checkSecondFactor } from '../../commands/dashboard-second-factor.ts';
import { BASE } from '../pages/layout.ts';
import { messagePage } from '../pages/auth.ts';
import { codePage } from '../pages/two-factor-code.ts';
import type { Speech } from '../language.ts';
import { field, locals, send } from '../http.ts';
import { endPreToken, preToken, preTokenOk } from '../pre-token.ts';
import { endPendingSignIn, pendingSignIn } from '../pending-sign-in.ts';

/** The network address attempts are counted by: the socket's peer (as the API's throttle counts), IPv4 without its IPv6 prefix. */
export const addressOf = (req: Request) => (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');

const signInAgain = (v: Speech) => messagePage(v, v.t('tfa.code.expired_title'), v.t('tfa.code.expired'), { href: `${BASE}/sign-in`, label: v.t('dash.signin.submit') });

export function addSignInCodeRoutes(r: Router, s: ApiServices): void {
  r.get('/sign-in/code', async (req, res) => {
    if (!(await pendingSignIn(s, req, locals(res).secure))) return res.redirect(303, `${BASE}/sign-in`);
    send(res, 200, codePage(locals(res), preToken(req, res)));
  });

  r.post('/sign-in/code', async (req, res) => {
    const v = locals(res);
    const pending = await pendingSignIn(s, req, v.secure);
    if (!pending) return send(res, 403, signInAgain(v));
    if (!preTokenOk(req, res)) return send(res, 403, codePage(v, preToken(req, res), v.t('dash.signin.expired')));
    const outcome = await checkSecondFactor(s, pending.user.id, addressOf(req), field(req, 'code'));
    if (outcome === 'locked') return send(res, 429, codePage(v, preToken(req, res), v.t('tfa.code.locked')));
    if (outcome === 'wrong') return send(res, 401, codePage(v, preToken(req, res), v.t('tfa.code.wrong')));
    await endPendingSignIn(s, res, v.secure, pending);
    await startSession(s, res, v.secure, pending.user);
    endPreToken(res);
    res.redirect(303, BASE);
  });
}
