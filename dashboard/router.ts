// The merchant dashboard at /dashboard: server-rendered pages (pages/*.ts), a stylesheet and a small
// script (static/). Public: sign-in and set-password (invitation). Everything else needs a session
// and shows only the session's merchant. Every POST is a form: same-origin only and CSRF-checked.
// The routes of each page group are in routes/*.ts; the checks every request passes in guards.ts.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { ApiServices } from '../api/services.ts';
import { secureCookies } from './session.ts';
import { BASE } from './pages/layout.ts';
import { locals } from './http.ts';
import { speak } from './language.ts';
import { formsOnly, securityHeaders, signedIn } from './guards.ts';
import { errorPage, notFound } from './errors.ts';
import { addSignInRoutes } from './routes/sign-in.ts';
import { addHomeRoutes } from './routes/home.ts';
import { addKeyRoutes } from './routes/keys.ts';
import { addWebhookRoutes } from './routes/webhooks.ts';
import { addEventRoutes } from './routes/events.ts';
import { addMoneyRoutes } from './routes/money.ts';
import { addStatementRoutes } from './routes/statements.ts';
import { addRefundRoutes } from './routes/refunds.ts';
import { addPaymentLinkRoutes } from './routes/payment-links.ts';
import { addTeamRoutes } from './routes/team.ts';
import { addSessionRoutes } from './routes/sessions.ts';
import { everyRouteGuarded, routesOf, type RouteNeed } from './permissions.ts';
import { addTwoFactorRoutes } from './routes/two-factor.ts';
import { twoFactorGate } from './two-factor-gate.ts';
import { everyChangeDeclared, recordDashboardChanges } from './audit.ts';
import { addAuditLogRoutes } from './routes/audit-log.ts';

const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');

// One router, not one per group: a nested router answers an OPTIONS request for its own paths itself,
// where here every request goes on to the session guard and the not-found page, in the order below.
function dashboardRouter(s: ApiServices): { router: express.Router; signedInFrom: number } {
  const r = express.Router();
  r.use(securityHeaders(s.config.providers.publicBaseUrl));
  r.use((req, res, next) => {
    // Metrics label: the route template, never a concrete id.
    res.locals.route = '/dashboard';
    locals(res).secure = secureCookies(s, req);
    next();
  });
  // The page's language, before any page (the sign-in page and the refusals below speak it too).
  r.use(speak(BASE, (req) => secureCookies(s, req)));
  r.use('/static', express.static(STATIC_DIR, { maxAge: '1h', index: false, fallthrough: true, setHeaders: (res) => res.setHeader('Cache-Control', 'public, max-age=3600') }));
  r.use(formsOnly);
  r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));
  // Before sign-in.
  addSignInRoutes(r, s);
  // Signed in from here on.
  r.use(signedIn(s));
  // Each change a POST made is recorded in the audit log before it is answered (audit.ts).
  r.use(recordDashboardChanges(s));
  // Every route added from here on names the permission it needs (permissions.ts), or the dashboard refuses to start.
  const signedInFrom = r.stack.length;
  // A member the team requires to use 2FA and who has none may only set it up (two-factor-gate.ts).
  r.use(twoFactorGate(s));
  addTwoFactorRoutes(r, s);
  addHomeRoutes(r, s);
  addKeyRoutes(r, s);
  addWebhookRoutes(r, s);
  addEventRoutes(r, s);
  addMoneyRoutes(r, s);
  addStatementRoutes(r, s);
  addRefundRoutes(r, s);
  addPaymentLinkRoutes(r, s);
  addTeamRoutes(r, s);
  addSessionRoutes(r, s);
  addAuditLogRoutes(r, s);
  everyRouteGuarded(r, signedInFrom);
  everyChangeDeclared(r, signedInFrom);
  r.use(notFound);
  r.use(errorPage(s));
  return { router: r, signedInFrom };
}

/** Every signed-in route with the permission it names, from the router itself (the roles test walks them all). */
export const signedInRoutes = (s: ApiServices): RouteNeed[] => {
  const { router, signedInFrom } = dashboardRouter(s);
  return routesOf(router, signedInFrom);
};

/** The hook app.ts hands createHttpApp: mounts the dashboard before the API's JSON-only body rules. */
export const mountDashboard = (s: ApiServices) => (app: express.Express) => {
  app.use(BASE, dashboardRouter(s).router);
};
