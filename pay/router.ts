// The payer's page at /pay (CONTRACT §16): public, no credentials, server-rendered in French or
// English, a stylesheet and a small script of its own (static/), working without JavaScript.
// Mounted by the composition root before the API's JSON-only rules, so none of the API's body rules
// or authentication applies; every path under /pay ends here (its own 404), never in the API.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { ApiServices } from '../api/services.ts';
import { securityHeaders } from './guards.ts';
import { speech, speechOf } from './language.ts';
import { PayLimits } from './limits.ts';
import { errorPage, formsFromOurPage, limitRequests } from './refusals.ts';
import { sendNotFound } from './answer.ts';
import { BASE } from './pages/layout.ts';
import { addFormRoutes } from './routes/form.ts';
import { addStatusRoutes } from './routes/status.ts';
import { addQrRoutes } from './routes/qr.ts';

const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');

function payRouter(s: ApiServices): express.Router {
  const limits = new PayLimits(s.config);
  const r = express.Router();
  r.use(securityHeaders);
  r.use((_req, res, next) => {
    // Metrics label: the route template, never a link's id.
    res.locals.route = BASE;
    next();
  });
  // The stylesheet, the script and the icon: the same in every language, cached by the browser, not
  // counted against the address.
  r.use('/static', express.static(STATIC_DIR, {
    index: false, fallthrough: true,
    setHeaders: (res) => {
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.removeHeader('Vary');
    },
  }));
  r.use((req, res, next) => {
    res.locals.speech = speech(req, res);
    next();
  });
  r.use(limitRequests(limits));
  r.use(formsFromOurPage(s));
  r.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }));
  addQrRoutes(r, s);
  addStatusRoutes(r, s);
  addFormRoutes(r, s, limits);
  r.use((req, res) => sendNotFound(req, res, speechOf(res)));
  r.use(errorPage(s));
  return r;
}

/** The hook app.ts hands createHttpApp: mounts the payer's page before the API's JSON-only body rules. */
export const mountPayerPage = (s: ApiServices) => (app: express.Express) => {
  app.use(BASE, payRouter(s));
};
