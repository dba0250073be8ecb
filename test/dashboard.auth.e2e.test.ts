// Dashboard accounts over HTTP: the operator's invitation, setting a password (scrypt format),
// sign-in and its lockout (the same for unknown addresses), session cookie flags, idle expiry,
// sign-out, CSRF and cross-site refusals, and nothing secret in the logs.
import t from 'tap';
import { Writable } from 'node:stream';
import { createHash, randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { FormClient, inviteUser, PASSWORD, signedInClient } from './helpers/dashboard.ts';
import { ManualClock } from '../infra/clock.ts';
import { verifyPassword } from '../infra/passwords.ts';

let logText = '';
const logStream = new Writable({ write(chunk, _enc, cb) { logText += chunk.toString(); cb(); } });
const clock = new ManualClock();
const h = await startTestApp({ clock, logStream, env: { LOG_LEVEL: 'info' } });
t.teardown(() => h.stop());
const knex = h.app.services.knex;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

t.test('operator invitation: one-time token stored hashed, validation, 404, 401, one merchant per address', async (t) => {
  const m = await h.newMerchant();
  const r = await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: '  Owner@Example.com ' });
  t.equal(r.status, 201);
  t.match(r.body, { id: String, merchant_id: m.merchantId, email: 'owner@example.com', status: 'invited', invitation_token: /^[A-Za-z0-9_-]{43}$/ });
  t.equal(r.body.invitation_path, `/dashboard/invite?token=${r.body.invitation_token}`);
  const row = await knex('dashboard_users').where({ id: r.body.id }).first();
  t.equal(row.invite_token_hash, sha256(r.body.invitation_token), 'only the hash is stored');
  t.equal(row.password_hash, null);
  const list = await h.admin('GET', `/admin/merchants/${m.merchantId}/dashboard-users`);
  t.match(list.body.data, [{ email: 'owner@example.com', status: 'invited' }]);
  t.notOk(JSON.stringify(list.body).includes('hash'), 'no hash in the listing');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'not-an-address' })).body.error.code, 'bad_request');
  t.equal((await h.admin('POST', `/admin/merchants/${randomUUID()}/dashboard-users`, { email: 'x@example.com' })).status, 404);
  t.equal((await h.as(m, 'POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'x@example.com' })).status, 401);
  const other = await h.newMerchant();
  const taken = await h.admin('POST', `/admin/merchants/${other.merchantId}/dashboard-users`, { email: 'owner@example.com' });
  t.equal(taken.status, 400);
  t.match(taken.body.error.details, [{ field: 'email' }]);
  // Inviting again replaces the link.
  const again = await inviteUser(h, m.merchantId, 'owner@example.com');
  const c = new FormClient(h.url);
  t.equal((await c.get(r.body.invitation_path)).status, 404, 'the first link no longer works');
  t.equal((await c.get(again.path)).status, 200);
});

t.test('set password through the link: rules, scrypt format, link used once', async (t) => {
  const m = await h.newMerchant();
  const { path, token } = await inviteUser(h, m.merchantId, 'setter@example.com');
  const c = new FormClient(h.url);
  const form = await c.get(path);
  t.equal(form.status, 200);
  t.match(form.text, /setter@example\.com/);
  const csrf = FormClient.csrf(form);
  t.equal((await c.post('/dashboard/invite', { csrf_token: csrf, token, password: 'short', password_confirm: 'short' })).status, 400);
  t.equal((await c.post('/dashboard/invite', { csrf_token: csrf, token, password: PASSWORD, password_confirm: PASSWORD + 'x' })).status, 400);
  t.equal((await c.post('/dashboard/invite', { csrf_token: 'wrong', token, password: PASSWORD, password_confirm: PASSWORD })).status, 403, 'pre-session CSRF token checked');
  const ok = await c.post('/dashboard/invite', { csrf_token: csrf, token, password: PASSWORD, password_confirm: PASSWORD });
  t.equal(ok.status, 303);
  t.equal(ok.location, '/dashboard/sign-in?done=password_set');
  const row = await knex('dashboard_users').where({ email: 'setter@example.com' }).first();
  t.match(row.password_hash, /^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/, 'scrypt N=2^15 r=8 p=1, 16-byte salt, 64-byte key');
  t.notOk(row.password_hash.includes(PASSWORD));
  t.equal(row.invite_token_hash, null, 'the link is used up');
  t.ok(await verifyPassword(PASSWORD, row.password_hash));
  t.notOk(await verifyPassword(PASSWORD + '!', row.password_hash));
  // Same password, another user: another salt, another hash.
  await signedInClient(h, m.merchantId, 'second@example.com');
  const second = await knex('dashboard_users').where({ email: 'second@example.com' }).first();
  t.not(second.password_hash, row.password_hash);
  t.equal((await c.get(path)).status, 404, 'the link does not work twice');
});

t.test('sign-in: cookie flags, session stored hashed, same answer for a wrong password and an unknown address', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'flags@example.com');
  const sid = c.cookies.get('mpa_session')!;
  t.match(sid, /^[A-Za-z0-9_-]{43}$/, '32 random bytes');
  t.ok(await knex('dashboard_sessions').where({ id_hash: sha256(sid) }).first(), 'stored as its SHA-256');
  t.notOk(await knex('dashboard_sessions').where({ id_hash: sid }).first());
  // The flags, from a fresh sign-in.
  const b = new FormClient(h.url);
  const r = await b.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'flags@example.com', password: PASSWORD });
  const cookie = r.setCookies.find((x) => x.startsWith('mpa_session='))!;
  t.match(cookie, /; Path=\//);
  t.match(cookie, /; HttpOnly/);
  t.match(cookie, /; SameSite=Strict/);
  t.notMatch(cookie, /Secure/, 'plain http: not Secure (DASHBOARD_COOKIE_SECURE=auto)');
  t.not(b.cookies.get('mpa_session'), sid, 'a new id per sign-in');
  t.equal((await b.get('/dashboard')).status, 200);

  const wrong = await new FormClient(h.url).submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'flags@example.com', password: 'not the password' });
  const unknown = await new FormClient(h.url).submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'nobody@example.com', password: 'not the password' });
  t.equal(wrong.status, 401);
  t.equal(unknown.status, 401);
  const message = (p: { text: string }) => /role="alert">([^<]*)</.exec(p.text)?.[1];
  t.equal(message(wrong), message(unknown), 'the same message');
  t.equal((await new FormClient(h.url).get('/dashboard')).location, '/dashboard/sign-in', 'no cookie: to sign-in');
});

t.test('lockout: 5 failures lock the address for 15 minutes, known or not; success resets', async (t) => {
  const m = await h.newMerchant();
  await signedInClient(h, m.merchantId, 'lock@example.com');
  const attempt = (email: string, password: string) => new FormClient(h.url).submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
  for (const email of ['lock@example.com', 'ghost@example.com']) {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt(email, `wrong ${i}`)).status);
    t.same(statuses, [401, 401, 401, 401, 429], `${email}: the fifth failure locks`);
    const locked = await attempt(email, PASSWORD);
    t.equal(locked.status, 429, 'even the right password is refused while locked');
    t.match(locked.text, /Try again in 15 minutes/);
  }
  clock.advance(14 * 60_000);
  t.equal((await attempt('lock@example.com', PASSWORD)).status, 429, 'still locked after 14 minutes');
  clock.advance(61_000);
  t.equal((await attempt('lock@example.com', PASSWORD)).status, 303, 'unlocked after 15 minutes');
  t.equal(await knex('dashboard_sign_in_failures').where({ email: 'lock@example.com' }).first(), undefined, 'a success clears the count');
  for (let i = 0; i < 4; i++) await attempt('lock@example.com', 'wrong');
  t.equal((await attempt('lock@example.com', PASSWORD)).status, 303, 'four failures do not lock');
});

t.test('Secure cookie and __Host- name when DASHBOARD_COOKIE_SECURE=true', async (t) => {
  const hs = await startTestApp({ env: { DASHBOARD_COOKIE_SECURE: 'true' } });
  t.teardown(() => hs.stop());
  const m = await hs.newMerchant();
  const { path, token } = await inviteUser(hs, m.merchantId, 'secure@example.com');
  const c = new FormClient(hs.url);
  const form = await c.get(path);
  t.match(form.setCookies[0], /^__Host-mpa_presession=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure/);
  await c.post('/dashboard/invite', { csrf_token: FormClient.csrf(form), token, password: PASSWORD, password_confirm: PASSWORD });
  const r = await c.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'secure@example.com', password: PASSWORD });
  t.equal(r.status, 303);
  t.match(r.setCookies.find((x) => x.startsWith('__Host-mpa_session=')), /; Path=\/; HttpOnly; SameSite=Strict; Secure/);
});

t.test('CSRF: a POST without the token, with another token, or from another origin is 403 and changes nothing', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'csrf@example.com');
  const keysPage = await c.get('/dashboard/keys');
  const csrf = FormClient.csrf(keysPage);
  const keys = async () => (await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data.length;
  const before = await keys();
  t.equal((await c.post('/dashboard/keys', { expires_in_days: '0' })).status, 403, 'no token');
  t.equal((await c.post('/dashboard/keys', { csrf_token: 'x'.repeat(43), expires_in_days: '0' })).status, 403, 'wrong token');
  const other = await signedInClient(h, m.merchantId, 'csrf2@example.com');
  t.equal((await c.post('/dashboard/keys', { csrf_token: FormClient.csrf(await other.get('/dashboard/keys')), expires_in_days: '0' })).status, 403, 'another session\'s token');
  t.equal((await c.post('/dashboard/keys', { csrf_token: csrf, expires_in_days: '0' }, { origin: 'https://evil.example' })).status, 403, 'cross-origin');
  t.equal((await c.post('/dashboard/keys', { csrf_token: csrf, expires_in_days: '0' }, { 'sec-fetch-site': 'cross-site' })).status, 403, 'cross-site fetch');
  t.equal((await c.post(`/dashboard/keys/${m.keyId}/revoke`, { confirmed: 'yes' })).status, 403, 'revoke without token');
  t.equal(await keys(), before, 'no key created');
  t.match((await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data, [{ id: m.keyId, status: 'active' }], 'not revoked');
  t.equal((await c.post('/dashboard/keys', { csrf_token: csrf, form_nonce: FormClient.nonce(keysPage, '/dashboard/keys')!, expires_in_days: '0' }, { origin: h.url })).status, 201, 'same origin with the token works');
  t.equal((await new FormClient(h.url).post('/dashboard/sign-in', { email: 'csrf@example.com', password: PASSWORD })).status, 403, 'sign-in needs its pre-session token');
});

t.test('sign-out deletes the session; idle sessions end', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'out@example.com');
  const sid = c.cookies.get('mpa_session')!;
  const out = await c.submit('/dashboard', '/dashboard/sign-out');
  t.equal(out.status, 303);
  t.match(out.setCookies.find((x) => x.startsWith('mpa_session=')), /Max-Age=0/);
  t.equal(await knex('dashboard_sessions').where({ id_hash: sha256(sid) }).first(), undefined, 'deleted');
  const replay = new FormClient(h.url);
  replay.cookies.set('mpa_session', sid);
  t.equal((await replay.get('/dashboard')).location, '/dashboard/sign-in', 'the old cookie opens nothing');

  const idle = await signedInClient(h, m.merchantId, 'idle@example.com');
  clock.advance(11 * 3600_000);
  t.equal((await idle.get('/dashboard')).status, 200, 'active within 12 hours; the request pushes the expiry back');
  clock.advance(11 * 3600_000);
  t.equal((await idle.get('/dashboard')).status, 200, 'still active: idle time counts from the last request');
  clock.advance(12 * 3600_000 + 1000);
  t.equal((await idle.get('/dashboard')).location, '/dashboard/sign-in', 'ended after 12 idle hours');
});

t.test('logs hold no password, session id, invitation token or API secret', async (t) => {
  const m = await h.newMerchant();
  const { token } = await inviteUser(h, m.merchantId, 'logs@example.com');
  const c = new FormClient(h.url);
  const form = await c.get(`/dashboard/invite?token=${token}`);
  await c.post('/dashboard/invite', { csrf_token: FormClient.csrf(form), token, password: PASSWORD, password_confirm: PASSWORD });
  await c.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'logs@example.com', password: PASSWORD });
  const created = await c.submit('/dashboard/keys', '/dashboard/keys', { expires_in_days: '0' });
  const secret = /id="new-secret"[^>]*>([^<]+)</.exec(created.text)![1]!;
  t.ok(logText.includes('/dashboard/keys'), 'requests are logged');
  for (const [what, value] of [['password', PASSWORD], ['session id', c.cookies.get('mpa_session')!], ['invitation token', token], ['API secret', secret]]) {
    t.notOk(logText.includes(value!), `no ${what} in the logs`);
  }
});
