// Signed in: the home page (balances and the merchant's progress) and signing out.
import type { Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { endSession } from '../session.ts';
import * as D from '../data.ts';
import { BASE } from '../pages/layout.ts';
import { homePage } from '../pages/home.ts';
import { CHART_CURRENCIES, dailyClosings } from '../balance-history.ts';
import { locals, requestId, send } from '../http.ts';

export function addHomeRoutes(r: Router, s: ApiServices): void {
  r.post('/sign-out', can('self:manage'), async (_req, res) => {
    await endSession(s, res, locals(res).secure, locals(res).session);
    res.redirect(303, `${BASE}/sign-in?done=signed_out`);
  });

  r.get('/', can('home:read'), async (req, res) => {
    const { session } = locals(res);
    const [wallets, progress, operators] = await Promise.all([
      D.walletsOf(s, session.merchantId, requestId(req)), D.progressOf(s, session.merchantId), D.operatorsOf(s, session.merchantId, requestId(req)),
    ]);
    const now = s.clock.now();
    const history = await Promise.all(CHART_CURRENCIES.map(async (currency) => ({ currency, days: await dailyClosings(s, session.merchantId, currency, now) })));
    send(res, 200, homePage(locals(res), { wallets, progress, operators, history, apiBase: `${req.protocol}://${req.header('host') ?? ''}` }));
  });
}
