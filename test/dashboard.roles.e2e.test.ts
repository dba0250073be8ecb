// Every signed-in dashboard route, taken from the router itself (a route added later is walked too),
// with every role (domain/dashboard-roles.ts): a route the role is allowed answers anything but 403;
// a refused one answers 403 with the refusal page in the member's language, and changes nothing (the
// refused POSTs carry everything a real form would: confirmed, a fresh nonce, the fields). And no page
// a role opens shows it a form it may not send.
import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { FormClient, PASSWORD, signedInClient } from './helpers/dashboard.ts';
import { newCustomer, settledPayins } from './helpers/money.ts';
import { signedInRoutes } from '../dashboard/router.ts';
import { ROLES, allows, type Role } from '../domain/dashboard-roles.ts';
import type { RouteNeed } from '../dashboard/permissions.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const knex = h.app.services.knex;

const m = await h.newMerchant('Roles');
const clients = new Map<Role, FormClient>();
for (const role of ROLES) clients.set(role, await signedInClient(h, m.merchantId, `${role}@roles.example.com`, PASSWORD, 'en', role));
const target = (await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'target@roles.example.com', role: 'viewer' })).body;
const endpoint = (await h.as(m, 'POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' })).body;
const link = (await h.as(m, 'POST', '/payment-links', { amount: '5000', currency: 'XAF', description: 'Roles' }, { idem: true })).body;
const event = (await h.as(m, 'GET', '/events')).body.data[0];
const [payin] = await settledPayins(h, m, await newCustomer(h, m), ['+237670000001']);

/** A real id for each parameter the dashboard's routes name (`id`: a completed payin's, a 404 as a payout or transfer); any other parameter a random id. */
const PARAMS: Record<string, string> = {
  keyId: m.keyId, endpointId: endpoint.id, linkId: link.id, memberId: target.id, eventId: event?.id ?? randomUUID(), id: payin!,
};
const concrete = (path: string) => `/dashboard${path}`.replace(/:([A-Za-z]+)/g, (_, name: string) => PARAMS[name] ?? randomUUID()).replace(/\/$/, '');

/** What a real form would send to act: confirmed, a fresh one-time nonce, and a value for every field some form has. */
const acting = (csrf: string) => ({
  csrf_token: csrf, form_nonce: randomBytes(16).toString('base64url'), confirmed: 'yes', role: 'viewer', email: `new-${randomUUID()}@roles.example.com`,
  grace_seconds: '0', expires_in_days: '0', status: 'disabled', url: 'http://127.0.0.1:9/other', events: '*', activate_after_seconds: '0',
  amount: '100', currency: 'XAF', description: 'Roles', max_payments: '1', reason: 'roles', required: 'false', code: '000000',
});

/** What any refused request could have changed: the event store, the form claims, the team and its sessions. */
async function fingerprint(): Promise<string> {
  const [events, claims, members, sessions] = await Promise.all([
    knex('events').count({ n: '*' }).first(), knex('idempotency_keys').count({ n: '*' }).first(),
    knex('dashboard_users').where({ merchant_id: m.merchantId }).orderBy('id').select('id', 'role', 'invite_token_hash', 'password_hash'),
    knex('dashboard_sessions').where({ merchant_id: m.merchantId }).orderBy('public_id').select('public_id'),
  ]);
  return JSON.stringify({ events, claims, members, sessions });
}

/** Signs the role's member in again after an allowed POST ended their session (sign-out, ending sessions). */
async function stillSignedIn(role: Role): Promise<FormClient> {
  const c = clients.get(role)!;
  if ((await c.get('/dashboard/sessions')).status === 200) return c;
  const again = await c.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: `${role}@roles.example.com`, password: PASSWORD });
  if (again.status !== 303) throw new Error(`sign-in again failed: ${again.status}`);
  return c;
}

const routes = signedInRoutes(h.app.services);

t.test('the router lists the dashboard\'s routes, each with a permission', async (t) => {
  t.ok(routes.length >= 38, `${routes.length} routes`);
  for (const path of ['/keys', '/team', '/sessions', '/statement', '/payins/:id/refunds']) t.ok(routes.some((r) => r.path === path), path);
  t.same(routes.filter((r) => r.permission === undefined), [], 'none without one');
});

async function walk(t: Test, role: Role, r: RouteNeed): Promise<void> {
  const c = await stillSignedIn(role);
  const path = concrete(r.path);
  const allowed = allows(role, r.permission!);
  const before = allowed ? '' : await fingerprint();
  const csrf = FormClient.csrf(await c.get('/dashboard/sessions'));
  const res = r.method === 'GET' ? await c.get(path) : await c.post(path, allowed ? { csrf_token: csrf } : acting(csrf));
  if (allowed) {
    t.not(res.status, 403, `${role} ${r.method} ${r.path} (${r.permission}): allowed`);
    return;
  }
  t.equal(res.status, 403, `${role} ${r.method} ${r.path} (${r.permission}): refused`);
  t.match(res.text, /Not allowed/, 'the refusal page, in the member\'s language');
  t.equal(await fingerprint(), before, 'nothing changed');
}

for (const role of ROLES) {
  t.test(`every route as ${role}`, async (t) => {
    for (const r of routes) await walk(t, role, r);
  });
}

/** The page a link opens (a path's parameters match any segment). */
const pageOf = (href: string) => routes.find((r) => r.method === 'GET' && new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}$`).test(href));
/** The route a form's action goes to (a path's parameters match any segment). */
const routeOf = (action: string) => routes.find((r) => r.method === 'POST' && new RegExp(`^/dashboard${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}$`).test(action));

t.test('no page shows a role a form it may not send, nor a link to a page it may not open', async (t) => {
  const pages = routes.filter((r) => r.method === 'GET' && r.path !== '/statement');
  for (const role of ROLES) {
    const c = await stillSignedIn(role);
    for (const r of pages.filter((p) => allows(role, p.permission!))) {
      const page = await c.get(concrete(r.path));
      for (const [, action] of page.text.matchAll(/<form method="post" action="([^"]+)"/g)) {
        const route = routeOf(action!);
        t.ok(route, `${action} is a route`);
        if (route) t.ok(allows(role, route.permission!), `${role} on ${r.path}: ${action} (${route.permission})`);
      }
      for (const [, href] of page.text.matchAll(/href="\/dashboard([^"?#]*)/g)) {
        const target = pageOf(href || '/');
        if (target) t.ok(allows(role, target.permission!), `${role} on ${r.path}: a link to ${href || '/'} (${target.permission})`);
      }
    }
  }
  const finance = await (await stillSignedIn('finance')).get('/dashboard');
  t.notMatch(finance.text, /href="\/dashboard\/keys"/, 'finance sees no API keys link');
  t.notMatch(finance.text, /\/dashboard\/keys/, 'nor any link or form for keys (the getting-started steps are not theirs)');
  const viewer = await (await stillSignedIn('viewer')).get('/dashboard/keys');
  t.equal(viewer.status, 200, 'a viewer reads the keys');
  t.notMatch(viewer.text, /action="\/dashboard\/keys/, 'without a form to change them');
});

t.test('the refusal speaks French to a member who reads French', async (t) => {
  const c = await stillSignedIn('viewer');
  c.cookies.set('lang', 'fr');
  const res = await c.get('/dashboard/team');
  t.equal(res.status, 200);
  const refused = await c.post('/dashboard/team/invite', acting(FormClient.csrf(res)));
  t.equal(refused.status, 403);
  t.match(refused.text, /Action non autorisée/);
  t.match(refused.text, /Votre rôle \(Lecteur\)/);
  c.cookies.set('lang', 'en');
});
