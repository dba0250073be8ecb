// When the owner requires two-step sign-in, a member without it can do nothing but set it up (or sign
// out): every other page sends them to /dashboard/two-factor, every other form is refused. Checked on
// each request, so it also holds for sessions that began before the owner required it.
import type { NextFunction, Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { mustEnrol } from '../commands/dashboard-two-factor.ts';
import { BASE, page } from './pages/layout.ts';
import { html } from '../infra/html.ts';
import { locals, send } from './http.ts';

const ALLOWED = /^\/(two-factor(\/.*)?|sign-out)$/;

export const twoFactorGate = (s: ApiServices) => async (req: Request, res: Response, next: NextFunction): Promise<void> => {
  const v = locals(res);
  if (ALLOWED.test(req.path) || !(await mustEnrol(s.knex, v.session.userId, v.session.merchantId))) return next();
  if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(303, `${BASE}/two-factor`);
  send(res, 403, page(v, v.t('dash.error.refused'), '', html`<p>${v.t('tfa.gate.refused')}</p><p><a href="${BASE}/two-factor">${v.t('tfa.title')}</a></p>`));
};
