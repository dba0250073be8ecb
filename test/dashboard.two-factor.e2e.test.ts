// Two-step sign-in over HTTP (issue 43 point 2): enrolment (QR code of the otpauth:// URI, the key as
// text, a first code, ten recovery codes shown once), sign-in with a code after the password (no
// session before it), wrong and replayed codes refused alike, a recovery code good once, the pending
// step's expiry, turning it off, the owner requiring it (a member without it can only enrol), the
// throttles per member and per address (codes and passwords), and nothing secret in the logs.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Writable } from 'node:stream';
import QRCode from 'qrcode';
import { startTestApp } from './helpers/app.ts';
import { FormClient, PASSWORD, type Page } from './helpers/dashboard.ts';
import { ManualClock } from '../infra/clock.ts';
import { totpCodeAt, totpUri } from '../infra/totp.ts';
import { LOCKOUT_MS, MAX_FAILED_CODES_PER_MEMBER, MAX_FAILURES_PER_ADDRESS } from '../commands/dashboard-throttle.ts';
import { PENDING_MS } from '../dashboard/pending-sign-in.ts';

let logText = '';
const logStream = new Writable({ write(chunk, _enc, cb) { logText += chunk.toString(); cb(); } });
const clock = new ManualClock(new Date('2026-11-28T09:00:05Z'));
const h = await startTestApp({ clock, logStream, env: { LOG_LEVEL: 'info' } });
t.teardown(() => h.stop());
const knex = h.app.services.knex;
/** Everything a member was shown that must never reach a log line. */
const secretsShown: string[] = [];

const now = () => clock.now().getTime();
/** Each sign-in in these tests uses a new 30-second step: a step's code is good once. */
const nextStep = () => clock.advance(30_000);
const alert = (p: Page) => /role="alert">([^<]*)</.exec(p.text)?.[1];

/** A member invited by the operator (default role: owner), password set, not signed in. */
async function member(merchantId: string, email: string, role?: string): Promise<void> {
  const r = await h.admin('POST', `/admin/merchants/${merchantId}/dashboard-users`, role ? { email, role } : { email });
  if (r.status !== 201) throw new Error(`invite failed: ${r.status} ${r.text}`);
  const c = new FormClient(h.url);
  const set = await c.submit(r.body.invitation_path, '/dashboard/invite', { token: r.body.invitation_token, password: PASSWORD, password_confirm: PASSWORD });
  if (set.status !== 303) throw new Error(`set password failed: ${set.status}`);
}

/** The password step: the client and the answer. */
async function password(email: string): Promise<{ c: FormClient; r: Page }> {
  const c = new FormClient(h.url);
  return { c, r: await c.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password: PASSWORD }) };
}

const sendCode = (c: FormClient, code: string) => c.submit('/dashboard/sign-in/code', '/dashboard/sign-in/code', { code });

/** Signed in with the password and, when asked, the current code. */
async function signedIn(email: string, secret?: string): Promise<FormClient> {
  const { c, r } = await password(email);
  if (r.location === '/dashboard/sign-in/code') {
    nextStep();
    const ok = await sendCode(c, totpCodeAt(secret!, now()));
    if (ok.status !== 303) throw new Error(`code refused: ${ok.status}`);
  }
  return c;
}

/** Enrols the signed-in member: the key read from the page, the recovery codes from the answer. */
async function enrol(c: FormClient): Promise<{ secret: string; codes: string[]; page: Page }> {
  const page = await c.get('/dashboard/two-factor');
  const secret = /data-secret="([A-Z2-7]+)"/.exec(page.text)![1]!;
  const done = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/enrol', { code: totpCodeAt(secret, now()) });
  if (done.status !== 200) throw new Error(`enrolment failed: ${done.status}`);
  const codes = [...done.text.matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((m) => m[1]!);
  secretsShown.push(secret, ...codes);
  return { secret, codes, page };
}

t.test('enrolment: QR code of the otpauth URI and the key; a first code confirms; ten recovery codes once', async (t) => {
  const m = await h.newMerchant();
  await member(m.merchantId, 'enrol@example.com');
  const c = await signedIn('enrol@example.com');
  t.match((await c.get('/dashboard')).text, /<a class="link" href="\/dashboard\/two-factor">Two-step sign-in<\/a>/, 'every page\'s header leads to it');
  const page = await c.get('/dashboard/two-factor');
  t.equal(page.status, 200);
  const secret = /data-secret="([A-Z2-7]{32})"/.exec(page.text)![1]!;
  const img = /<img class="qr" src="data:image\/svg\+xml;base64,([^"]+)"/.exec(page.text)![1]!;
  const expected = await QRCode.toString(totpUri(secret, 'enrol@example.com'), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  t.equal(Buffer.from(img, 'base64').toString(), expected, 'the QR code draws otpauth://totp/Merchant Payments:enrol@example.com?secret=…');
  t.match(totpUri(secret, 'x'), /^otpauth:\/\/totp\/Merchant%20Payments:x\?issuer=Merchant%20Payments&secret=/);
  t.match(page.text, new RegExp(secret.slice(0, 4) + ' ' + secret.slice(4, 8)), 'the key as text, in groups of four');
  t.equal(/data-secret="([A-Z2-7]+)"/.exec((await c.get('/dashboard/two-factor')).text)![1], secret, 'a reload: the same key');
  const row = await knex('dashboard_two_factor as f').join('dashboard_users as u', 'u.id', 'f.user_id').where('u.email', 'enrol@example.com').first('f.secret_sealed');
  t.notOk(row.secret_sealed.includes(secret), 'sealed at rest');

  const wrong = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/enrol', { code: '000000' === totpCodeAt(secret, now()) ? '111111' : '000000' });
  t.equal(wrong.status, 400);
  t.match(alert(wrong), /does not match/);
  const done = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/enrol', { code: totpCodeAt(secret, now()) });
  t.equal(done.status, 200);
  const codes = [...done.text.matchAll(/<li><code>([a-z2-7]{5}-[a-z2-7]{5})<\/code><\/li>/g)].map((x) => x[1]);
  t.equal(codes.length, 10, 'ten recovery codes');
  secretsShown.push(secret, ...(codes as string[]));
  const after = await c.get('/dashboard/two-factor');
  t.match(after.text, /Two-step sign-in has been on since/);
  t.match(after.text, /Recovery codes left: 10/);
  t.notOk(codes.some((x) => after.text.includes(x!)), 'the codes are not shown again');
  t.notOk(after.text.includes(secret), 'nor the key');
  const again = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/enrol', { code: totpCodeAt(secret, now()) });
  t.equal(again.status, 303, 'the form sent again: back to the page, no new codes');
});

t.test('sign-in with a code: no session after the password alone; wrong and replayed codes refused alike; recovery code once', async (t) => {
  const m = await h.newMerchant();
  await member(m.merchantId, 'codes@example.com');
  const { secret, codes } = await enrol(await signedIn('codes@example.com'));

  nextStep();
  const { c, r } = await password('codes@example.com');
  t.equal(r.status, 303);
  t.equal(r.location, '/dashboard/sign-in/code');
  t.notOk(c.cookies.has('mpa_session'), 'no session cookie yet');
  t.equal((await c.get('/dashboard')).location, '/dashboard/sign-in', 'the dashboard: not signed in');
  const form = await c.get('/dashboard/sign-in/code');
  t.equal(form.status, 200);
  t.match(form.text, /autocomplete="one-time-code"/);
  const code = totpCodeAt(secret, now());
  const wrongCode = code === '000000' ? '111111' : '000000';
  const wrong = await sendCode(c, wrongCode);
  t.equal(wrong.status, 401);
  const ok = await sendCode(c, code);
  t.equal(ok.status, 303);
  t.equal(ok.location, '/dashboard');
  t.equal((await c.get('/dashboard')).status, 200, 'signed in');
  t.notOk(c.cookies.has('mpa_pending'), 'the pending step ended');
  t.equal((await c.post('/dashboard/sign-in/code', { csrf_token: FormClient.csrf(form), code })).status, 403, 'the pending step cannot be used again');

  const second = await password('codes@example.com');
  const replayed = await sendCode(second.c, code);
  t.equal(replayed.status, 401, 'the same code again, within its window: refused');
  t.equal(alert(replayed), alert(wrong), 'with the same answer as a wrong code');
  t.equal((await sendCode(second.c, codes[0]!)).status, 303, 'a recovery code signs in');
  const third = await password('codes@example.com');
  const used = await sendCode(third.c, codes[0]!);
  t.equal(used.status, 401, 'the recovery code again: refused');
  t.equal(alert(used), alert(wrong), 'the same answer');
  t.match((await third.c.get('/dashboard/two-factor')).location ?? '', /sign-in/, 'still not signed in');
  await knex('dashboard_two_factor_failures').delete();
});

t.test('the pending step ends after five minutes; the code form without it asks to sign in again', async (t) => {
  const m = await h.newMerchant();
  await member(m.merchantId, 'slow@example.com');
  const { secret } = await enrol(await signedIn('slow@example.com'));
  nextStep();
  const { c } = await password('slow@example.com');
  const form = await c.get('/dashboard/sign-in/code');
  clock.advance(PENDING_MS);
  const late = await c.post('/dashboard/sign-in/code', { csrf_token: FormClient.csrf(form), code: totpCodeAt(secret, now()) });
  t.equal(late.status, 403);
  t.match(late.text, /Sign in again/);
  t.equal((await new FormClient(h.url).get('/dashboard/sign-in/code')).location, '/dashboard/sign-in', 'no pending step: to the password');
  const noCsrf = await (await password('slow@example.com')).c.post('/dashboard/sign-in/code', { code: totpCodeAt(secret, now()) });
  t.equal(noCsrf.status, 403, 'the pre-session CSRF token is checked');
});

t.test('turning it off takes a current code; then the password alone signs in', async (t) => {
  const m = await h.newMerchant();
  await member(m.merchantId, 'off@example.com');
  const c = await signedIn('off@example.com');
  const { secret } = await enrol(c);
  nextStep();
  const wrong = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/disable', { code: totpCodeAt(secret, now() - 120_000) });
  t.equal(wrong.status, 401);
  t.match(alert(wrong), /still on/);
  const off = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/disable', { code: totpCodeAt(secret, now()) });
  t.equal(off.status, 303);
  t.match((await c.get(off.location!)).text, /Two-step sign-in is off/);
  t.equal(await knex('dashboard_recovery_codes as r').join('dashboard_users as u', 'u.id', 'r.user_id').where('u.email', 'off@example.com').first(), undefined, 'recovery codes gone');
  t.equal((await password('off@example.com')).r.location, '/dashboard', 'no code asked');
  await knex('dashboard_two_factor_failures').delete();
});

t.test('the operator resets a member who lost phone and codes: key, codes, sessions and a waiting sign-in end at once; audited; 404 for another merchant\'s', async (t) => {
  const m = await h.newMerchant();
  const other = await h.newMerchant();
  await member(m.merchantId, 'lost@example.com');
  const c = await signedIn('lost@example.com');
  await enrol(c);
  nextStep();
  const waiting = await password('lost@example.com');
  t.equal(waiting.r.location, '/dashboard/sign-in/code', 'a sign-in waits for a code');
  const userId = ((await knex('dashboard_users').where({ email: 'lost@example.com' }).first('id')) as { id: string }).id;
  const path = `/admin/merchants/${m.merchantId}/dashboard-users/${userId}/two-factor`;
  t.equal((await h.admin('DELETE', `/admin/merchants/${other.merchantId}/dashboard-users/${userId}/two-factor`)).status, 404, 'not through another merchant');
  t.equal((await h.admin('DELETE', `/admin/merchants/${m.merchantId}/dashboard-users/${randomUUID()}/two-factor`)).status, 404, 'an unknown user');
  t.equal((await c.get('/dashboard')).status, 200, 'still signed in before the reset');
  const reset = await h.admin('DELETE', path);
  t.equal(reset.status, 200);
  t.match(reset.body, { id: userId, email: 'lost@example.com', status: 'active' });
  t.equal((await c.get('/dashboard')).location, '/dashboard/sign-in', 'the session ended');
  t.equal((await waiting.c.get('/dashboard/sign-in/code')).location, '/dashboard/sign-in', 'the sign-in waiting for a code ended');
  for (const table of ['dashboard_two_factor', 'dashboard_recovery_codes']) t.equal((await knex(table).where({ user_id: userId })).length, 0, `${table}: nothing left`);
  t.equal((await password('lost@example.com')).r.location, '/dashboard', 'the password alone signs in again');
  const entries = await h.admin('GET', `/admin/audit-log?merchant_id=${m.merchantId}&action=two_factor.reset`);
  t.equal(entries.body.data.length, 1, 'one audit entry');
  t.match(entries.body.data[0], { action: 'two_factor.reset', actor: { type: 'operator' }, target: { type: 'dashboard_user', id: userId } });
  await knex('dashboard_two_factor_failures').delete();
});

t.test('the owner requires 2FA: a member without it must enrol first and can do nothing else', async (t) => {
  const m = await h.newMerchant();
  await member(m.merchantId, 'boss@example.com');
  await member(m.merchantId, 'dev@example.com', 'developer');
  await member(m.merchantId, 'early@example.com', 'finance');
  const early = await signedIn('early@example.com'); // a session begun before the rule
  const dev = await signedIn('dev@example.com');
  const notOwner = await dev.submit('/dashboard/two-factor', '/dashboard/two-factor/require', { required: 'true' });
  t.equal(notOwner.status, 403, 'only the owner');
  t.notMatch((await dev.get('/dashboard/two-factor')).text, /require-heading/, 'the switch is not shown to others');
  const boss = await signedIn('boss@example.com');
  const first = await boss.submit('/dashboard/two-factor', '/dashboard/two-factor/require', { required: 'true' });
  t.equal(first.status, 400, 'the owner enrols first');
  t.match(alert(first), /for yourself first/);
  await enrol(boss);
  t.equal((await boss.submit('/dashboard/two-factor', '/dashboard/two-factor/require', { required: 'maybe' })).status, 400);
  const on = await boss.submit('/dashboard/two-factor', '/dashboard/two-factor/require', { required: 'true' });
  t.equal(on.status, 303);
  t.match((await boss.get(on.location!)).text, /now required for every member/);

  nextStep();
  const { c, r } = await password('dev@example.com');
  t.equal(r.location, '/dashboard/two-factor', 'right after the password: enrolment');
  t.equal((await c.get('/dashboard')).location, '/dashboard/two-factor', 'every page leads there');
  t.equal((await c.get('/dashboard/keys')).location, '/dashboard/two-factor');
  const page = await c.get('/dashboard/two-factor');
  t.match(page.text, /Your team requires two-step sign-in/);
  const post = await c.post('/dashboard/keys', { csrf_token: FormClient.csrf(page), form_nonce: 'AAAAAAAAAAAAAAAAAAAAAA' });
  t.equal(post.status, 403, 'no other form');
  t.match(post.text, /Set up two-step sign-in first/);
  t.equal((await early.get('/dashboard/payins')).location, '/dashboard/two-factor', 'a session from before the rule too');
  const { secret } = await enrol(c);
  t.equal((await c.get('/dashboard')).status, 200, 'enrolled: the dashboard');
  nextStep();
  const off = await c.submit('/dashboard/two-factor', '/dashboard/two-factor/disable', { code: totpCodeAt(secret, now()) });
  t.equal(off.status, 403, 'cannot turn it off while required');
  t.match(alert(off), /cannot be turned off/);
  const relax = await boss.submit('/dashboard/two-factor', '/dashboard/two-factor/require', { required: 'false' });
  t.equal(relax.status, 303);
  t.equal((await early.get('/dashboard/payins')).status, 200, 'no longer required: the member without 2FA is free again');
});

t.test('throttle per member: five wrong codes lock the member, the right code too, for 15 minutes', async (t) => {
  const m = await h.newMerchant();
  await member(m.merchantId, 'brute@example.com');
  const { secret } = await enrol(await signedIn('brute@example.com'));
  nextStep();
  const { c } = await password('brute@example.com');
  const statuses: number[] = [];
  for (let i = 0; i < MAX_FAILED_CODES_PER_MEMBER; i++) statuses.push((await sendCode(c, String(100000 + i))).status);
  t.same(statuses, [401, 401, 401, 401, 429]);
  const locked = await sendCode(c, totpCodeAt(secret, now()));
  t.equal(locked.status, 429, 'the right code: still refused');
  t.match(alert(locked), /Try again in 15 minutes/);
  clock.advance(LOCKOUT_MS);
  t.equal((await signedIn('brute@example.com', secret).then((x) => x.get('/dashboard'))).status, 200, 'after 15 minutes');
});

t.test('throttle per address: codes and passwords from one address, across accounts', async (t) => {
  const m = await h.newMerchant();
  const secrets: string[] = [];
  for (let i = 0; i < MAX_FAILURES_PER_ADDRESS / 4 + 1; i++) {
    await member(m.merchantId, `spray${i}@example.com`);
    secrets.push((await enrol(await signedIn(`spray${i}@example.com`))).secret);
  }
  nextStep();
  const statuses: number[] = [];
  for (let i = 0; i < MAX_FAILURES_PER_ADDRESS / 4; i++) {
    const { c } = await password(`spray${i}@example.com`);
    for (let j = 0; j < 4; j++) statuses.push((await sendCode(c, String(200000 + j))).status); // under each member's limit
  }
  t.same(statuses.slice(0, -1).filter((s) => s !== 401), [], 'wrong codes');
  t.equal(statuses.at(-1), 429, 'the twentieth from one address locks it');
  const last = MAX_FAILURES_PER_ADDRESS / 4;
  const { c } = await password(`spray${last}@example.com`);
  t.equal((await sendCode(c, totpCodeAt(secrets[last]!, now()))).status, 429, 'a member with no failure, from that address: refused');
  clock.advance(LOCKOUT_MS);

  const tries: number[] = [];
  for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) {
    const w = new FormClient(h.url);
    tries.push((await w.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: `nobody${i}@example.com`, password: 'wrong password' })).status);
  }
  t.same(tries.slice(0, -1).filter((s) => s !== 401), [], 'wrong passwords on many addresses');
  t.equal(tries.at(-1), 429, 'the twentieth from one network address locks it');
  const blocked = await password('spray0@example.com');
  t.equal(blocked.r.status, 429, 'even the right password');
  t.match(alert(blocked.r), /from your network/);
  clock.advance(LOCKOUT_MS);
});

t.test('no TOTP key or recovery code in the logs', async (t) => {
  t.ok(secretsShown.length > 20);
  for (const s of secretsShown) t.notOk(logText.includes(s) || logText.includes(s.replace('-', '')), 'not logged');
});
