// The audit log in the dashboard (CONTRACT §18, issue 43 point 4): a change made through a form
// records one entry with the member as actor; a confirmation page, a form sent again, a refused form
// and a read record none; the audit page lists the merchant's own entries only, newest first,
// filtered, paged, in English and French, and exports them as CSV.
import t from 'tap';
import { ADMIN_TOKEN, startTestApp } from './helpers/app.ts';
import { FormClient, PASSWORD, signedInClient } from './helpers/dashboard.ts';
import { until } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const rowsOf = async (merchantId: string) => s.knex('audit_log').where({ merchant_id: merchantId }).orderBy([{ column: 'at', order: 'desc' }, { column: 'id', order: 'desc' }]);
const userId = async (email: string) => (await s.knex('dashboard_users').where({ email }).first('id')).id as string;
/** The hidden fields of a confirmation page's form. */
const hidden = (text: string) => Object.fromEntries([...text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((x) => [x[1]!, x[2]!]));

t.test('a form\'s change records one entry with the member; confirmation pages, repeats, refusals and reads none', async (t) => {
  const m = await h.newMerchant('Dash Audit');
  const c = await signedInClient(h, m.merchantId, 'auditor@example.com');
  const member = await userId('auditor@example.com');
  const start = (await rowsOf(m.merchantId)).length;

  for (const path of ['/dashboard', '/dashboard/keys', '/dashboard/webhooks', '/dashboard/audit-log', '/dashboard/audit-log?format=csv']) t.equal((await c.get(path)).status, 200, path);
  const asked = await c.submit('/dashboard/keys', `/dashboard/keys/${m.keyId}/revoke`);
  t.equal(asked.status, 200, 'a confirmation first');
  const refusedCsrf = await c.post(`/dashboard/keys/${m.keyId}/revoke`, { csrf_token: 'wrong', confirmed: 'yes' });
  t.equal(refusedCsrf.status, 403);
  const refusedChoice = await c.submit('/dashboard/keys', '/dashboard/keys', { expires_in_days: '7' });
  t.equal(refusedChoice.status, 400);
  const refusedInForm = await c.submit('/dashboard/links', '/dashboard/links', { amount: '-5', currency: 'XAF', description: 'Refused' });
  t.equal(refusedInForm.status, 400, 'a one-time form whose change is refused');
  t.equal((await rowsOf(m.merchantId)).length, start, 'reads, a confirmation page and refusals: nothing');

  const page = await c.get('/dashboard/keys');
  const revoked = await c.post(`/dashboard/keys/${m.keyId}/revoke`, { ...hidden(asked.text), csrf_token: FormClient.csrf(page), confirmed: 'yes' }, { 'x-request-id': 'dash-revoke-1' });
  t.equal(revoked.status, 303);
  const entry = await until('the revoke entry', async () => (await rowsOf(m.merchantId)).find((r) => r.action === 'api_key.revoked'));
  t.match(entry, { actor_type: 'member', actor_id: member, target_type: 'api_key', target_id: m.keyId, request_id: 'dash-revoke-1', ip: /^127\.0\.0\.1$|^::1$/ });

  const form = await c.get('/dashboard/keys');
  const fields = { csrf_token: FormClient.csrf(form), form_nonce: FormClient.nonce(form, '/dashboard/keys')!, expires_in_days: '0', access: 'all' };
  const created = await c.post('/dashboard/keys', fields);
  t.equal(created.status, 201);
  const again = await c.post('/dashboard/keys', fields);
  t.equal(again.status, 409, 'the same form again');
  const memberCreated = async () => (await rowsOf(m.merchantId)).filter((r) => r.action === 'api_key.created' && r.actor_type === 'member');
  await until('the create entry', async () => (await memberCreated()).length > 0);
  const newKey = (await s.knex('api_keys').where({ merchant_id: m.merchantId }).whereNot({ id: m.keyId }).first('id')).id as string;

  const out = await c.post('/dashboard/sign-out', { csrf_token: FormClient.csrf(await c.get('/dashboard/keys')) });
  t.equal(out.status, 303);
  // Each entry is recorded before its answer is sent: once the sign-out is answered, a repeat's entry would be there too.
  await until('the sign-out entry', async () => (await rowsOf(m.merchantId)).some((r) => r.action === 'session.signed_out' && r.target_id === member));
  const made = await memberCreated();
  t.equal(made.length, 1, 'one entry for the form, none for its repeat');
  t.match(made[0], { actor_id: member, target_type: 'api_key', target_id: newKey });
  t.equal((await rowsOf(m.merchantId)).length, start + 3, 'three changes, three entries');

  // No secret in any entry: the member's password, the new key's secret (shown once on its page), the operator token.
  const secrets = [PASSWORD, ADMIN_TOKEN, ...[...created.text.matchAll(/class="secret"[^>]*>([^<]+)</g)].map((x) => x[1]!)];
  t.ok(secrets.length >= 3, 'the new secret was shown');
  const events = await s.store.readStream(`audit-${m.merchantId}`);
  const stored = JSON.stringify(events.map((e) => [e.data, e.metadata])) + JSON.stringify(await rowsOf(m.merchantId));
  for (const secret of secrets) t.notOk(stored.includes(secret), 'no secret stored');
});

t.test('the audit page: the merchant\'s own entries only, newest first, filtered, paged, exported; in French', async (t) => {
  const mine = await h.newMerchant('Mine');
  const theirs = await h.newMerchant('Theirs');
  for (let i = 0; i < 22; i++) await h.admin('PUT', `/admin/merchants/${mine.merchantId}/pricing`, { payin: { percent: '1', fixed: String(i) } });
  await h.admin('PUT', `/admin/merchants/${theirs.merchantId}/pricing`, { payin: { percent: '2', fixed: '2' } });
  const c = await signedInClient(h, mine.merchantId, 'owner-mine@example.com');
  const other = await signedInClient(h, theirs.merchantId, 'owner-theirs@example.com');
  const mineRows = await rowsOf(mine.merchantId);
  const theirRows = await rowsOf(theirs.merchantId);

  const first = await c.get('/dashboard/audit-log');
  t.equal(first.status, 200);
  const ids = (text: string) => [...text.matchAll(/data-entry-id="([^"]+)"/g)].map((x) => x[1]!);
  t.same(ids(first.text), mineRows.slice(0, 20).map((r) => r.id), 'twenty, newest first');
  t.ok(theirRows.every((r) => !first.text.includes(r.id)), 'none of another merchant\'s');
  const next = /href="\/dashboard\/audit-log\?([^"]*cursor=[^"]+)"/.exec(first.text)![1]!.replace(/&amp;/g, '&');
  const second = await c.get(`/dashboard/audit-log?${next}`);
  t.same(ids(second.text), mineRows.slice(20).map((r) => r.id), 'the rest on the next page');
  t.ok(ids((await other.get('/dashboard/audit-log')).text).every((id) => theirRows.some((r) => r.id === id)), 'the other merchant sees only its own');
  t.notOk(ids((await other.get(`/dashboard/audit-log?${next}`)).text).some((id) => mineRows.some((r) => r.id === id)), 'even with a cursor of mine');
  const otherCsv = await other.get(`/dashboard/audit-log?format=csv&merchant_id=${mine.merchantId}`);
  t.ok(mineRows.every((r) => !otherCsv.text.includes(r.id)), 'nor in its export, whatever the query says');

  const created = await c.get('/dashboard/audit-log?action=merchant.created');
  t.same(ids(created.text), mineRows.filter((r) => r.action === 'merchant.created').map((r) => r.id), 'by action');
  t.match(created.text, /<option value="merchant\.created" selected>Account created<\/option>/);
  const byOperator = await c.get('/dashboard/audit-log?actor=operator');
  t.equal(ids(byOperator.text).length, 20);
  const byMember = await c.get(`/dashboard/audit-log?actor=member:${await userId('owner-mine@example.com')}`);
  t.match(byMember.text, /No change recorded for this filter/);
  t.match((await c.get('/dashboard/audit-log?from=2000-01-01&to=2000-01-02')).text, /No change recorded/, 'by days');
  const bad = await c.get('/dashboard/audit-log?from=2026-13-01');
  t.equal(bad.status, 400, 'a day that is not one');
  t.match(bad.text, /Dates must be days/);

  const csv = await c.get('/dashboard/audit-log?format=csv&action=merchant.pricing_set');
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  const lines = csv.text.split('\r\n');
  t.equal(lines[0], 'id,at,merchant_id,actor_type,actor_id,action,target_type,target_id,request_id,ip');
  t.equal(lines.length, 22 + 2, 'every pricing change, not just a page');

  const fr = new FormClient(h.url, 'fr');
  for (const [k, v] of c.cookies) if (k !== 'lang') fr.cookies.set(k, v);
  const french = await fr.get('/dashboard/audit-log?action=merchant.created');
  t.match(french.text, /<h1>Journal d'audit<\/h1>|<h1>Journal d&#39;audit<\/h1>/);
  t.match(french.text, /Compte créé/);
  t.match(french.text, /<td>Compte <code>/, 'the target\'s kind in words');
  t.match(french.text, /Exporter en CSV/);
});

t.test('the team\'s changes: an invitation (never its token), a role changed, not a role set to the same', async (t) => {
  const m = await h.newMerchant('Team Audit');
  const owner = await signedInClient(h, m.merchantId, 'owner@audit-team.example.com');
  const ownerId = await userId('owner@audit-team.example.com');
  const page = await owner.get('/dashboard/team');
  const form = { csrf_token: FormClient.csrf(page), form_nonce: FormClient.nonce(page, '/dashboard/team/invite')!, email: 'dev@audit-team.example.com', role: 'developer' };
  const invited = await owner.post('/dashboard/team/invite', form);
  t.equal(invited.status, 201);
  const token = new URL(/id="invitation-link"[^>]*>([^<]+)</.exec(invited.text)![1]!).searchParams.get('token')!;
  const dev = await userId('dev@audit-team.example.com');
  const entries = async () => (await rowsOf(m.merchantId)).filter((r) => r.actor_type === 'member');
  t.match(await entries(), [{ action: 'dashboard_user.invited', actor_id: ownerId, target_type: 'dashboard_user', target_id: dev }]);

  const csrf = FormClient.csrf(page);
  t.equal((await owner.post(`/dashboard/team/${dev}/role`, { csrf_token: csrf, role: 'finance', confirmed: 'yes' })).location, '/dashboard/team?done=role_changed');
  t.equal((await owner.post(`/dashboard/team/${dev}/role`, { csrf_token: csrf, role: 'finance', confirmed: 'yes' })).location, '/dashboard/team?done=role_same');
  t.same((await entries()).map((e) => e.action), ['dashboard_user.role_changed', 'dashboard_user.invited'], 'the same role again changed nothing: no entry');

  const stored = JSON.stringify((await s.store.readStream(`audit-${m.merchantId}`)).map((e) => [e.data, e.metadata])) + (await owner.get('/dashboard/audit-log?format=csv')).text;
  t.notOk(stored.includes(token), 'the invitation token is in no entry');
  t.ok(stored.includes(dev), 'the member invited is, by id');
});
