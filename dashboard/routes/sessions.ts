// Signed in: the member's own sessions (issue 43 point 3): the list, ending one (ending this one
// signs out) and ending every other. Every role may: it touches only the member's own sessions.
import type { Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { Refusal } from '../refusal.ts';
import { can } from '../permissions.ts';
import { endMemberSession, endOtherSessions, sessionsOf } from '../member-sessions.ts';
import { sessionCookieName, setCookie } from '../session.ts';
import { BASE } from '../pages/layout.ts';
import { sessionsPage } from '../pages/sessions.ts';
import { done, locals, send } from '../http.ts';

export function addSessionRoutes(r: Router, s: ApiServices): void {
  r.get('/sessions', can('self:manage'), async (req, res) => {
    const v = locals(res);
    send(res, 200, sessionsPage(v, await sessionsOf(s, v.session), done(req, res)));
  });

  r.post('/sessions/end-others', can('self:manage'), async (_req, res) => {
    await endOtherSessions(s, locals(res).session);
    res.redirect(303, `${BASE}/sessions?done=others_ended`);
  });

  r.post('/sessions/:publicId/end', can('self:manage'), async (req, res) => {
    const v = locals(res);
    const publicId = String(req.params.publicId);
    if (!(await endMemberSession(s, v.session, publicId))) throw new Refusal('team.sessions.not_found', {}, 'not_found');
    if (publicId !== v.session.publicId) return res.redirect(303, `${BASE}/sessions?done=session_ended`);
    setCookie(res, sessionCookieName(v.secure), '', v.secure, 0);
    res.redirect(303, `${BASE}/sign-in?done=signed_out`);
  });
}
