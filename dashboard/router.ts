// The merchant dashboard at /dashboard: server-rendered pages (pages/*.ts), a stylesheet and a small
// script (static/). Public: sign-in and set-password (invitation). Everything else needs a session
// and shows only the session's merchant. Every POST is a form: same-origin only and CSRF-checked.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { DomainError } from '../domain/errors.ts';
import type { Html } from './html.ts';
import { CSRF_FIELD, newToken, sameOrigin, tokensMatch } from './csrf.ts';
import {
  currentSession, endSession, preSessionCookieName, readCookie, secureCookies, setCookie, startSession, type Session,
} from './session.ts';
import { acceptInvite, signIn, userByInvite } from '../commands/dashboard-users.ts';
import { passwordProblem } from '../infra/passwords.ts';
import * as D from './data.ts';
import * as A from './actions.ts';
import { BASE, page, publicPage } from './pages/layout.ts';
import { messagePage, setPasswordPage, signInPage } from './pages/auth.ts';
import { homePage } from './pages/home.ts';
import { keyPage, keysPage } from './pages/keys.ts';
import { confirmPage } from './pages/confirm.ts';
import { webhooksPage } from './pages/webhooks.ts';
import { eventPage, eventsPage } from './pages/events.ts';
import { listPage } from './pages/money.ts';
import { detailPage } from './pages/detail.ts';
import { html } from './html.ts';
import { NONCE_FIELD, newNonce, once, validNonce } from './form-once.ts';
import { alreadyDonePage } from './pages/already-done.ts';

const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');

/** Messages after a redirect, by code: nothing from the request is ever shown as text. */
const DONE: Record<string, string> = {
  revoked: 'The key is revoked: requests made with it are refused from now on.',
  test_sent: 'Test event sent. It appears in the event log within a few seconds, with each delivery attempt.',
  redelivered: 'Redelivery asked for: the attempt runs now and appears below (reload the page in a moment).',
  test_sent_before: 'This form had already sent its test event: no other was sent. It is in the event log.',
  redelivered_before: 'This form had already asked for a redelivery: no other attempt was added.',
  password_set: 'Your password is set. Sign in with your e-mail address and the new password.',
  signed_out: 'You are signed out.',
  expired: 'Your session has ended. Sign in again.',
};

type Locals = { session: Session; secure: boolean };
const locals = (res: Response) => res.locals as unknown as Locals;
const requestId = (req: Request) => String((req as Request & { id?: string }).id ?? '');
const field = (req: Request, name: string): string => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
const query = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v.slice(0, 500) : undefined;
};
const done = (req: Request) => DONE[query(req, 'done') ?? ''];
/** The form's one-time nonce (form-once.ts). */
const nonce = (req: Request) => field(req, NONCE_FIELD);
/** The nonce a confirmation page carries over: the form's own, so confirming twice still runs once. */
const keepNonce = (req: Request) => (validNonce(nonce(req)) ? nonce(req) : newNonce());

function send(res: Response, status: number, body: Html): void {
  res.status(status).type('html').send(body.value);
}

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy',
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // The invitation link carries its token in the query: never send it to another site as a referrer.
  // (Not `no-referrer`: with it browsers send `Origin: null` on our own forms, which the origin check refuses.)
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
  next();
}

/** YYYY-MM-DD from a date input as an inclusive bound (start or end of that UTC day). */
function dayBound(v: string | undefined, end: boolean): string | undefined | null {
  if (v === undefined) return undefined;
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))) return null;
  return end ? `${v}T23:59:59.999Z` : `${v}T00:00:00.000Z`;
}

export function dashboardRouter(s: ApiServices): express.Router {
  const r = express.Router();
  r.use(securityHeaders);
  r.use((req, res, next) => {
    // Metrics label: the route template, never a concrete id.
    res.locals.route = '/dashboard';
    locals(res).secure = secureCookies(s, req);
    next();
  });
  r.use('/static', express.static(STATIC_DIR, { maxAge: '1h', index: false, fallthrough: true, setHeaders: (res) => res.setHeader('Cache-Control', 'public, max-age=3600') }));

  // Forms only: urlencoded, small. A POST from another site is refused before anything else.
  r.use((req, res, next) => {
    if (req.method !== 'POST') return next();
    if (!sameOrigin(req)) return send(res, 403, messagePage('Refused', 'This form was sent from another site.'));
    if (!req.is('application/x-www-form-urlencoded')) return send(res, 415, messagePage('Refused', 'Forms must be sent as application/x-www-form-urlencoded.'));
    next();
  });
  r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));

  // ---- before sign-in: a pre-session CSRF token (cookie + hidden field) protects these forms ----
  const preToken = (req: Request, res: Response): string => {
    const name = preSessionCookieName(locals(res).secure);
    const existing = readCookie(req, name);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = newToken();
    setCookie(res, name, token, locals(res).secure);
    return token;
  };
  const preTokenOk = (req: Request, res: Response) => tokensMatch(readCookie(req, preSessionCookieName(locals(res).secure)), field(req, CSRF_FIELD));

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
    if (!user) return send(res, 404, messagePage('Link not valid', 'This link is invalid, already used or expired. Ask your payments operator for a new one.'));
    send(res, 200, setPasswordPage(preToken(req, res), token, user.email));
  });

  r.post('/invite', async (req, res) => {
    const token = field(req, 'token');
    const user = await userByInvite(s, token);
    if (!user) return send(res, 404, messagePage('Link not valid', 'This link is invalid, already used or expired. Ask your payments operator for a new one.'));
    if (!preTokenOk(req, res)) return send(res, 403, setPasswordPage(preToken(req, res), token, user.email, 'The form had expired. Please try again.'));
    const password = field(req, 'password');
    const problem = passwordProblem(password, user.email)
      ?? (password !== field(req, 'password_confirm') ? 'The two passwords differ.' : undefined);
    if (problem) return send(res, 400, setPasswordPage(preToken(req, res), token, user.email, problem));
    if (!(await acceptInvite(s, token, password))) return send(res, 404, messagePage('Link not valid', 'This link was used or has expired.'));
    res.redirect(303, `${BASE}/sign-in?done=password_set`);
  });

  // ---- signed in from here on ----
  r.use(async (req, res, next) => {
    const session = await currentSession(s, req, locals(res).secure);
    if (!session) {
      if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(303, `${BASE}/sign-in`);
      return send(res, 403, messagePage('Session ended', 'Your session has ended. Sign in again.', { href: `${BASE}/sign-in`, label: 'Sign in' }));
    }
    locals(res).session = session;
    if (req.method === 'POST' && !tokensMatch(session.csrfToken, field(req, CSRF_FIELD))) {
      return send(res, 403, page(session, 'Refused', '', html`<p>This form could not be checked (it may be from an old page). Go back, reload and try again.</p>`));
    }
    next();
  });

  r.post('/sign-out', async (_req, res) => {
    await endSession(s, res, locals(res).secure, locals(res).session);
    res.redirect(303, `${BASE}/sign-in?done=signed_out`);
  });

  r.get('/', async (req, res) => {
    const { session } = locals(res);
    const [wallets, progress] = await Promise.all([D.walletsOf(s, session.merchantId, requestId(req)), D.progressOf(s, session.merchantId)]);
    send(res, 200, homePage(session, { wallets, progress, apiBase: `${req.protocol}://${req.header('host') ?? ''}` }));
  });

  // ---- API keys ----
  r.get('/keys', async (req, res) => {
    const { session } = locals(res);
    send(res, 200, keysPage(session, await D.keysOf(s, session.merchantId), { info: done(req) }));
  });

  r.post('/keys', async (req, res) => {
    const { session } = locals(res);
    const days = Number(field(req, 'expires_in_days') || '0');
    if (!A.EXPIRY_CHOICES.some((e) => e.days === days)) throw new DomainError('bad_request', 'Choose an expiry from the list');
    const created = await once(s, session, nonce(req), `${BASE}/keys`,
      () => A.createKey(s, session, requestId(req), days),
      (c) => ({ action: 'key_created', key_id: c.key.id, api_key: c.key.api_key }));
    if (created.kind === 'repeat') return send(res, 409, alreadyDonePage(session, created.summary));
    send(res, 201, keysPage(session, await D.keysOf(s, session.merchantId), { revealed: created.result }));
  });

  const keyOr404 = async (req: Request, res: Response) => {
    const key = await D.keyOf(s, locals(res).session.merchantId, String(req.params.keyId));
    if (!key) throw new DomainError('not_found', 'API key not found');
    return key;
  };

  r.get('/keys/:keyId', async (req, res) => {
    send(res, 200, keyPage(locals(res).session, await keyOr404(req, res)));
  });

  r.post('/keys/:keyId/rotate', async (req, res) => {
    const { session } = locals(res);
    const key = await keyOr404(req, res);
    const grace = Number(field(req, 'grace_seconds') || '0');
    if (!A.GRACE_CHOICES.some((g) => g.seconds === grace)) throw new DomainError('bad_request', 'Choose a grace period from the list');
    if (field(req, 'confirmed') !== 'yes') {
      const choice = A.GRACE_CHOICES.find((g) => g.seconds === grace)!.label.toLowerCase();
      return send(res, 200, confirmPage(session, {
        title: 'Rotate this key?', question: `A new secret is created for ${key.api_key}; the current secret stops working ${choice}.`,
        action: `${BASE}/keys/${key.id}/rotate`, button: 'Rotate', fields: { grace_seconds: String(grace), [NONCE_FIELD]: keepNonce(req) }, back: `${BASE}/keys`,
      }));
    }
    const rotated = await once(s, session, nonce(req), `${BASE}/keys/${key.id}/rotate`,
      () => A.rotateKey(s, session, requestId(req), key.id, grace),
      (r) => ({ action: 'key_rotated', key_id: r.key.id, api_key: r.key.api_key }));
    if (rotated.kind === 'repeat') return send(res, 409, alreadyDonePage(session, rotated.summary));
    send(res, 201, keysPage(session, await D.keysOf(s, session.merchantId), { revealed: { ...rotated.result, rotated: true } }));
  });

  r.post('/keys/:keyId/revoke', async (req, res) => {
    const { session } = locals(res);
    const key = await keyOr404(req, res);
    if (field(req, 'confirmed') !== 'yes') {
      return send(res, 200, confirmPage(session, {
        title: 'Revoke this key?', question: `Every request made with ${key.api_key} is refused from now on. This cannot be undone.`,
        action: `${BASE}/keys/${key.id}/revoke`, button: 'Revoke', fields: {}, back: `${BASE}/keys`,
      }));
    }
    await A.revokeKey(s, session, requestId(req), key.id);
    res.redirect(303, `${BASE}/keys?done=revoked`);
  });

  // ---- webhooks ----
  const webhooks = async (req: Request, res: Response, status: number, extra: { secret?: string; error?: string; typedUrl?: string } = {}) => {
    const { session } = locals(res);
    const [url, recent] = await Promise.all([D.webhookUrlOf(s, session.merchantId), D.eventsOf(s, session.merchantId, { limit: 10 })]);
    send(res, status, webhooksPage(session, { url, recent: recent.data, info: done(req), ...extra }));
  };

  r.get('/webhooks', (req, res) => webhooks(req, res, 200));

  r.post('/webhooks', async (req, res) => {
    const { session } = locals(res);
    const url = field(req, 'url').trim();
    try {
      if (url === '' || url.length > 2000) throw new DomainError('bad_request', 'Enter a URL of at most 2000 characters');
      const r2 = await once(s, session, nonce(req), `${BASE}/webhooks`,
        () => A.setWebhookUrl(s, session, requestId(req), url), () => ({ action: 'webhook_set' }));
      if (r2.kind === 'repeat') return send(res, 409, alreadyDonePage(session, r2.summary));
      await webhooks(req, res, 200, { secret: r2.result.signingSecret });
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'bad_request') throw err;
      await webhooks(req, res, 400, { error: err.message, typedUrl: url.slice(0, 2000) });
    }
  });

  r.post('/webhooks/rotate-secret', async (req, res) => {
    const { session } = locals(res);
    if (field(req, 'confirmed') !== 'yes') {
      return send(res, 200, confirmPage(session, {
        title: 'Rotate the signing secret?', question: 'A new signing secret is created; the current one stops signing at once.',
        action: `${BASE}/webhooks/rotate-secret`, button: 'Rotate signing secret', fields: { [NONCE_FIELD]: keepNonce(req) }, back: `${BASE}/webhooks`,
      }));
    }
    const r2 = await once(s, session, nonce(req), `${BASE}/webhooks/rotate-secret`,
      () => A.rotateWebhookSecret(s, session, requestId(req)), () => ({ action: 'webhook_secret_rotated' }));
    if (r2.kind === 'repeat') return send(res, 409, alreadyDonePage(session, r2.summary));
    await webhooks(req, res, 200, { secret: r2.result.signingSecret });
  });

  r.post('/webhooks/test', async (req, res) => {
    const { session } = locals(res);
    const sent = await once(s, session, nonce(req), `${BASE}/webhooks/test`,
      (testId) => A.sendTestEvent(s, session, requestId(req), testId), (testId) => ({ action: 'test_sent', test_id: testId }));
    res.redirect(303, `${BASE}/webhooks?done=${sent.kind === 'first' ? 'test_sent' : 'test_sent_before'}`);
  });

  // ---- event log ----
  r.get('/events', async (req, res) => {
    const { session } = locals(res);
    const f = {
      delivery_status: D.DELIVERY_FILTERS.includes(query(req, 'delivery_status') ?? '') ? query(req, 'delivery_status') : undefined,
      type: D.EVENT_TYPES.includes(query(req, 'type') ?? '') ? query(req, 'type') : undefined,
    };
    const events = await D.eventsOf(s, session.merchantId, { deliveryStatus: f.delivery_status, type: f.type, cursor: query(req, 'cursor') });
    send(res, 200, eventsPage(session, events.data, events.next_cursor, f));
  });

  r.get('/events/:eventId', async (req, res) => {
    const { session } = locals(res);
    const ev = await D.eventOf(s, session.merchantId, String(req.params.eventId));
    if (!ev) throw new DomainError('not_found', 'Event not found');
    const url = await D.webhookUrlOf(s, session.merchantId);
    send(res, 200, eventPage(session, ev, { info: done(req), canRedeliver: url !== null }));
  });

  r.post('/events/:eventId/redeliver', async (req, res) => {
    const { session } = locals(res);
    const ev = await D.eventOf(s, session.merchantId, String(req.params.eventId));
    if (!ev) throw new DomainError('not_found', 'Event not found');
    const asked = await once(s, session, nonce(req), `${BASE}/events/${ev.id}/redeliver`,
      (redeliveryId) => A.redeliver(s, session, ev.id, redeliveryId), () => ({ action: 'redelivered', event_id: ev.id }));
    res.redirect(303, `${BASE}/events/${ev.id}?done=${asked.kind === 'first' ? 'redelivered' : 'redelivered_before'}`);
  });

  // ---- money ----
  for (const kind of ['payins', 'payouts', 'transfers'] as const) {
    r.get(`/${kind}`, async (req, res) => {
      const { session } = locals(res);
      const form = { status: query(req, 'status'), from: query(req, 'from'), to: query(req, 'to'), q: query(req, 'q')?.trim().slice(0, 200) };
      const from = dayBound(form.from, false);
      const to = dayBound(form.to, true);
      const status = form.status && D.KINDS[kind].statuses.includes(form.status) ? form.status : undefined;
      if (from === null || to === null) {
        return send(res, 400, listPage(session, kind, [], null, form, 'Dates must be written YYYY-MM-DD.'));
      }
      const list = await D.listOf(s, session.merchantId, kind, { status, createdFrom: from, createdTo: to, search: form.q || undefined, cursor: query(req, 'cursor') });
      send(res, 200, listPage(session, kind, list.data, list.next_cursor, { ...form, status }));
    });

    r.get(`/${kind}/:id`, async (req, res) => {
      const { session } = locals(res);
      const id = String(req.params.id);
      const item = await D.readResource(s, session.merchantId, requestId(req), kind, id);
      if (!item) throw new DomainError('not_found', `${D.KINDS[kind].singular} not found`);
      const [history, hooks] = await Promise.all([
        D.historyOf(s, session.merchantId, requestId(req), kind, id),
        D.eventsOf(s, session.merchantId, { resourceId: id, limit: 50 }),
      ]);
      send(res, 200, detailPage(session, kind, item, history, hooks.data));
    });
  }

  r.use((_req, res) => {
    const session = (res.locals as Partial<Locals>).session;
    const body = html`<p>There is no such page.</p><p><a href="${BASE}">Dashboard home</a></p>`;
    send(res, 404, session ? page(session, 'Not found', '', body) : publicPage('Not found', body));
  });

  r.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const session = (res.locals as Partial<Locals>).session;
    const wrap = (title: string, text: string) => {
      const body = html`<p>${text}</p><p><a href="${BASE}">Dashboard home</a></p>`;
      return session ? page(session, title, '', body) : publicPage(title, body);
    };
    if (err instanceof DomainError && (err.code === 'not_found' || err.code === 'bad_request')) {
      return send(res, err.code === 'not_found' ? 404 : 400, wrap(err.code === 'not_found' ? 'Not found' : 'Not done', err.message));
    }
    const e = err as { type?: string; status?: number };
    if (e?.type === 'entity.too.large') return send(res, 413, wrap('Refused', 'That form is too large.'));
    if (e?.status && e.status >= 400 && e.status < 500) return send(res, 400, wrap('Refused', 'The request could not be read.'));
    s.log.error({ err, request_id: requestId(req) }, 'dashboard: unhandled error');
    send(res, 500, wrap('Something went wrong', 'The page could not be shown. Try again in a moment.'));
  });

  return r;
}

/** The hook app.ts hands createHttpApp: mounts the dashboard before the API's JSON-only body rules. */
export const mountDashboard = (s: ApiServices) => (app: express.Express) => {
  app.use(BASE, dashboardRouter(s));
};
