// A member's sessions (issue 43 point 3): the page lists their own, each with its device (from the
// User-Agent), address, sign-in and last use, and "this session"; ending one signs that browser out,
// ending this one signs out, another member's session cannot be ended. Removing a member, changing
// their role or resetting their password (a new invitation, by the operator or from the Team page)
// ends all their sessions at once.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { FormClient, PASSWORD, inviteUser, signedInClient } from './helpers/dashboard.ts';
import { deviceOf } from '../dashboard/user-agent.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const knex = h.app.services.knex;

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

/** A browser that signs in with its own User-Agent on every request. */
async function browser(email: string, ua: string): Promise<FormClient & { ua: string }> {
  const c = Object.assign(new FormClient(h.url), { ua });
  const form = await c.get('/dashboard/sign-in', { 'user-agent': ua });
  const r = await c.post('/dashboard/sign-in', { csrf_token: FormClient.csrf(form), email, password: PASSWORD }, { 'user-agent': ua });
  if (r.status !== 303) throw new Error(`sign-in failed: ${r.status}`);
  return c;
}

const sessionCount = async (email: string) =>
  Number((await knex('dashboard_sessions as s').join('dashboard_users as u', 'u.id', 's.user_id').where('u.email', email).count({ n: '*' }).first())!.n);
const signedIn = async (c: FormClient) => (await c.get('/dashboard/sessions')).status === 200;

t.test('the device in a few words', async (t) => {
  t.same(deviceOf(FIREFOX), { browser: 'Firefox', system: 'Windows' });
  t.same(deviceOf(ANDROID), { browser: 'Chrome', system: 'Android' });
  t.same(deviceOf('Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'), { browser: 'Safari', system: 'iPhone' });
  t.same(deviceOf('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0'), { browser: 'Edge', system: 'Windows' });
  t.same(deviceOf(null), { browser: undefined, system: undefined });
});

t.test('a member lists their sessions and ends one, the others, or this one', async (t) => {
  const m = await h.newMerchant();
  await signedInClient(h, m.merchantId, 'me@sessions.example.com');
  await knex('dashboard_sessions').delete().whereIn('user_id', knex('dashboard_users').where({ email: 'me@sessions.example.com' }).select('id'));
  const desk = await browser('me@sessions.example.com', FIREFOX);
  const phone = await browser('me@sessions.example.com', ANDROID);
  const tablet = await browser('me@sessions.example.com', ANDROID);
  const other = await signedInClient(h, m.merchantId, 'other@sessions.example.com');

  const page = await desk.get('/dashboard/sessions');
  t.equal(page.status, 200);
  t.match(page.text, /Firefox on Windows <strong class="badge">This session<\/strong>/);
  t.match(page.text, /Chrome on Android/);
  t.match(page.text, /<td>127\.0\.0\.1<\/td>/, 'the address it signed in from');
  t.equal([...page.text.matchAll(/<tr data-session="/g)].length, 3, 'their own three, not the other member\'s');
  const fr = await desk.get('/dashboard/sessions?lang=fr');
  t.match(fr.text, /Firefox sur Windows <strong class="badge">Cette session<\/strong>/, 'in French too');
  desk.cookies.set('lang', 'en');

  const ids = async (c: FormClient) => [...(await c.get('/dashboard/sessions')).text.matchAll(/<tr data-session="([^"]+)"( data-current="yes")?/g)].map((x) => ({ id: x[1]!, current: x[2] !== undefined }));
  const phoneId = (await ids(phone)).find((x) => x.current)!.id;
  const csrf = FormClient.csrf(page);
  const ended = await desk.post(`/dashboard/sessions/${phoneId}/end`, { csrf_token: csrf });
  t.equal(ended.location, '/dashboard/sessions?done=session_ended');
  t.notOk(await signedIn(phone), 'that browser is signed out at its next request');
  t.ok(await signedIn(tablet));
  t.equal((await desk.post(`/dashboard/sessions/${phoneId}/end`, { csrf_token: csrf })).status, 404, 'ended already');

  const otherId = (await ids(other)).find((x) => x.current)!.id;
  t.equal((await desk.post(`/dashboard/sessions/${otherId}/end`, { csrf_token: csrf })).status, 404, 'another member\'s session is not theirs to end');
  t.ok(await signedIn(other));

  t.equal((await desk.post('/dashboard/sessions/end-others', { csrf_token: csrf })).location, '/dashboard/sessions?done=others_ended');
  t.notOk(await signedIn(tablet), 'every other session ended');
  t.ok(await signedIn(desk), 'not this one');
  t.equal(await sessionCount('me@sessions.example.com'), 1);

  const deskId = (await ids(desk)).find((x) => x.current)!.id;
  const out = await desk.post(`/dashboard/sessions/${deskId}/end`, { csrf_token: csrf });
  t.equal(out.location, '/dashboard/sign-in?done=signed_out', 'ending this one signs out');
  t.notOk(await signedIn(desk));
  t.equal(await sessionCount('me@sessions.example.com'), 0);
});

t.test('a password reset ends every session at once: the new link from the operator or the Team page, and setting the password', async (t) => {
  const m = await h.newMerchant();
  const owner = await signedInClient(h, m.merchantId, 'owner@reset.example.com');
  await signedInClient(h, m.merchantId, 'dev@reset.example.com', PASSWORD, 'en', 'developer');
  const one = await browser('dev@reset.example.com', FIREFOX);
  const two = await browser('dev@reset.example.com', ANDROID);
  t.equal(await sessionCount('dev@reset.example.com'), 3);

  const link = await inviteUser(h, m.merchantId, 'dev@reset.example.com');
  t.equal(await sessionCount('dev@reset.example.com'), 0, 'the operator\'s new link ends them, before the password is set');
  t.notOk(await signedIn(one));
  t.notOk(await signedIn(two));
  t.equal((await knex('dashboard_users').where({ email: 'dev@reset.example.com' }).first('role')).role, 'developer', 'the role is kept');

  // Still the old password until the link is used; then every session since ends too.
  const three = await browser('dev@reset.example.com', FIREFOX);
  const c = new FormClient(h.url);
  const newPassword = `${PASSWORD} again`;
  t.equal((await c.submit(link.path, '/dashboard/invite', { token: link.token, password: newPassword, password_confirm: newPassword })).status, 303);
  t.notOk(await signedIn(three), 'setting the password ends the sessions');

  const four = new FormClient(h.url);
  t.equal((await four.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'dev@reset.example.com', password: newPassword })).status, 303);
  const page = await owner.get('/dashboard/team');
  const reset = await owner.post('/dashboard/team/invite', {
    csrf_token: FormClient.csrf(page), form_nonce: FormClient.nonce(page, '/dashboard/team/invite')!, email: 'dev@reset.example.com', role: 'developer',
  });
  t.equal(reset.status, 201, 'the Team page sends the member a new link');
  t.match(reset.text, /token=/);
  t.notOk(await signedIn(four), 'and their sessions end at once');
  t.equal(await sessionCount('dev@reset.example.com'), 0);
});

t.test('removing a member or changing their role ends every session of theirs at once', async (t) => {
  const m = await h.newMerchant();
  const owner = await signedInClient(h, m.merchantId, 'owner@ends.example.com');
  await signedInClient(h, m.merchantId, 'fin@ends.example.com', PASSWORD, 'en', 'finance');
  const a = await browser('fin@ends.example.com', FIREFOX);
  const b = await browser('fin@ends.example.com', ANDROID);
  const id = (await knex('dashboard_users').where({ email: 'fin@ends.example.com' }).first('id')).id;
  const csrf = FormClient.csrf(await owner.get('/dashboard/team'));
  t.equal((await owner.post(`/dashboard/team/${id}/role`, { csrf_token: csrf, role: 'viewer', confirmed: 'yes' })).status, 303);
  t.equal(await sessionCount('fin@ends.example.com'), 0, 'a role change ends all three');
  t.notOk(await signedIn(a));
  t.notOk(await signedIn(b));
  const c = await browser('fin@ends.example.com', FIREFOX);
  const d = await browser('fin@ends.example.com', ANDROID);
  t.equal((await owner.post(`/dashboard/team/${id}/remove`, { csrf_token: csrf, confirmed: 'yes' })).status, 303);
  t.notOk(await signedIn(c), 'removal ends them');
  t.notOk(await signedIn(d));
  t.equal(await sessionCount('fin@ends.example.com'), 0);
  t.ok(await signedIn(owner), 'the owner\'s own session goes on');
});
