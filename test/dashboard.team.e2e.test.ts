// The Team page (issue 43 point 1): an owner invites with a role (the one-time link shown once, as
// the operator API does), changes a role and removes a member, each ending the member's sessions;
// an admin cannot touch an owner nor make one; nobody takes away the last owner; the operator API's
// invitation takes a role (default owner) and answers it.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { FormClient, PASSWORD, inviteUser, signedInClient } from './helpers/dashboard.ts';
import { TeamChangeRefused, changeRole, lockOwners } from '../commands/dashboard-team.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const knex = h.app.services.knex;

const roleOf = async (email: string) => (await knex('dashboard_users').where({ email }).first('role'))?.role;
const sessionsOf = async (email: string) => Number((await knex('dashboard_sessions as s').join('dashboard_users as u', 'u.id', 's.user_id').where('u.email', email).count({ n: '*' }).first())!.n);
const idOf = async (email: string) => (await knex('dashboard_users').where({ email }).first('id')).id as string;
const signedOut = async (c: FormClient) => (await c.get('/dashboard/team')).location === '/dashboard/sign-in';

t.test('the operator invites with a role: default owner, the role answered and listed, an unknown one refused', async (t) => {
  const m = await h.newMerchant();
  const first = await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'first@team.example.com' });
  t.equal(first.status, 201);
  t.equal(first.body.role, 'owner', 'the first member: owner by default');
  const dev = await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'dev@team.example.com', role: 'developer' });
  t.equal(dev.body.role, 'developer');
  t.match((await h.admin('GET', `/admin/merchants/${m.merchantId}/dashboard-users`)).body.data, [{ role: 'owner' }, { role: 'developer' }]);
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'x@team.example.com', role: 'boss' })).status, 400);
  const again = await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'dev@team.example.com' });
  t.equal(again.body.role, 'developer', 'invited again without a role: keeps theirs');
  const demote = await h.admin('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'first@team.example.com', role: 'viewer' });
  t.equal(demote.status, 400, 'the operator cannot take away the last owner either');
  t.equal(await roleOf('first@team.example.com'), 'owner');
});

t.test('an owner invites, changes a role and removes a member; each change ends the member\'s sessions', async (t) => {
  const m = await h.newMerchant();
  const owner = await signedInClient(h, m.merchantId, 'owner@team1.example.com');
  const page = await owner.get('/dashboard/team');
  t.equal(page.status, 200);
  t.match(page.text, /owner@team1\.example\.com <span class="muted">\(you\)<\/span>/);
  const nonce = FormClient.nonce(page, '/dashboard/team/invite')!;
  const form = { csrf_token: FormClient.csrf(page), form_nonce: nonce, email: 'Finance@Team1.example.com', role: 'finance' };
  const invited = await owner.post('/dashboard/team/invite', form);
  t.equal(invited.status, 201);
  const url = /id="invitation-link"[^>]*>([^<]+)</.exec(invited.text)?.[1];
  t.match(url, /^http:\/\/127\.0\.0\.1:[0-9]+\/dashboard\/invite\?token=[A-Za-z0-9_-]{43}$/, 'the one-time link, shown once');
  t.equal(await roleOf('finance@team1.example.com'), 'finance');
  const resent = await owner.post('/dashboard/team/invite', form);
  t.equal(resent.status, 409, 'the same form again invites nobody');
  t.notMatch(resent.text, /token=/, 'and shows no link');

  // The new member sets a password through the link and signs in with the role given.
  const finance = new FormClient(h.url);
  const token = new URL(url!).searchParams.get('token')!;
  t.equal((await finance.submit(`/dashboard/invite?token=${token}`, '/dashboard/invite', { token, password: PASSWORD, password_confirm: PASSWORD })).status, 303);
  t.equal((await finance.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'finance@team1.example.com', password: PASSWORD })).status, 303);
  t.equal((await finance.get('/dashboard/keys')).status, 403, 'as finance: no keys');
  t.equal(await sessionsOf('finance@team1.example.com'), 1);

  const id = await idOf('finance@team1.example.com');
  const csrf = FormClient.csrf(page);
  const ask = await owner.post(`/dashboard/team/${id}/role`, { csrf_token: csrf, role: 'developer' });
  t.equal(ask.status, 200, 'asks first (no JavaScript)');
  t.match(ask.text, /Give finance@team1\.example\.com the role Developer\?/);
  t.equal(await roleOf('finance@team1.example.com'), 'finance', 'nothing changed before the confirmation');
  const changed = await owner.post(`/dashboard/team/${id}/role`, { csrf_token: csrf, role: 'developer', confirmed: 'yes' });
  t.equal(changed.location, '/dashboard/team?done=role_changed');
  t.equal(await roleOf('finance@team1.example.com'), 'developer');
  t.equal(await sessionsOf('finance@team1.example.com'), 0, 'their sessions ended with the change');
  t.ok(await signedOut(finance), 'their browser is signed out');
  t.equal((await owner.post(`/dashboard/team/${id}/role`, { csrf_token: csrf, role: 'developer', confirmed: 'yes' })).location, '/dashboard/team?done=role_same');

  t.equal((await finance.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'finance@team1.example.com', password: PASSWORD })).status, 303);
  t.equal((await finance.get('/dashboard/keys')).status, 200, 'signed in again, as a developer');
  t.equal((await owner.post(`/dashboard/team/${id}/remove`, { csrf_token: csrf })).status, 200, 'removing asks first');
  const removed = await owner.post(`/dashboard/team/${id}/remove`, { csrf_token: csrf, confirmed: 'yes' });
  t.equal(removed.location, '/dashboard/team?done=member_removed');
  t.equal(await roleOf('finance@team1.example.com'), undefined, 'gone from the team');
  t.equal(await knex('dashboard_sessions').where({ user_id: id }).count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'their sessions with them');
  t.ok(await signedOut(finance));
  t.equal((await finance.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'finance@team1.example.com', password: PASSWORD })).status, 401, 'and cannot sign in');
  t.equal((await owner.post(`/dashboard/team/${id}/remove`, { csrf_token: csrf, confirmed: 'yes' })).status, 404, 'removed already');

  t.equal((await owner.post('/dashboard/team/invite', { csrf_token: csrf, form_nonce: FormClient.nonce(await owner.get('/dashboard/team'), '/dashboard/team/invite')!, email: 'nope', role: 'viewer' })).status, 400, 'a bad address');
  t.equal((await owner.post('/dashboard/team/invite', { csrf_token: csrf, form_nonce: FormClient.nonce(await owner.get('/dashboard/team'), '/dashboard/team/invite')!, email: 'a@team1.example.com', role: 'boss' })).status, 400, 'a role not on the list');
});

t.test('an admin cannot remove, demote or reset an owner, nor make one; nobody takes away the last owner', async (t) => {
  const m = await h.newMerchant();
  const owner = await signedInClient(h, m.merchantId, 'owner@team2.example.com');
  const admin = await signedInClient(h, m.merchantId, 'admin@team2.example.com', PASSWORD, 'en', 'admin');
  const ownerId = await idOf('owner@team2.example.com');
  const page = await admin.get('/dashboard/team');
  t.notMatch(page.text, new RegExp(`/dashboard/team/${ownerId}/`), 'no button on the owner\'s row');
  t.notMatch(page.text, /<option value="owner"/, 'an admin cannot give the owner role');
  const csrf = FormClient.csrf(page);
  const demote = await admin.post(`/dashboard/team/${ownerId}/role`, { csrf_token: csrf, role: 'viewer', confirmed: 'yes' });
  t.equal(demote.status, 403);
  t.match(demote.text, /Only an owner may change or remove an owner/);
  t.equal((await admin.post(`/dashboard/team/${ownerId}/remove`, { csrf_token: csrf, confirmed: 'yes' })).status, 403);
  const nonce = () => admin.get('/dashboard/team').then((p) => FormClient.nonce(p, '/dashboard/team/invite')!);
  const reset = await admin.post('/dashboard/team/invite', { csrf_token: csrf, form_nonce: await nonce(), email: 'owner@team2.example.com', role: 'owner' });
  t.equal(reset.status, 403, 'nor send the owner a new link (that would take over the account)');
  t.notMatch(reset.text, /token=/);
  const grant = await admin.post('/dashboard/team/invite', { csrf_token: csrf, form_nonce: await nonce(), email: 'new@team2.example.com', role: 'owner' });
  t.equal(grant.status, 403, 'nor invite an owner');
  t.equal(await roleOf('new@team2.example.com'), undefined);
  t.equal(await roleOf('owner@team2.example.com'), 'owner');
  t.equal(await sessionsOf('owner@team2.example.com'), 1, 'the owner is still signed in');

  const own = FormClient.csrf(await owner.get('/dashboard/team'));
  const last = await owner.post(`/dashboard/team/${ownerId}/role`, { csrf_token: own, role: 'admin', confirmed: 'yes' });
  t.equal(last.status, 400, 'the last owner cannot demote themself');
  t.match(last.text, /last owner/);
  t.equal((await owner.post(`/dashboard/team/${ownerId}/remove`, { csrf_token: own, confirmed: 'yes' })).status, 400, 'nor leave');
  const adminId = await idOf('admin@team2.example.com');
  t.equal((await owner.post(`/dashboard/team/${adminId}/role`, { csrf_token: own, role: 'owner', confirmed: 'yes' })).status, 303, 'an owner makes another owner');
  t.equal((await owner.post(`/dashboard/team/${ownerId}/role`, { csrf_token: own, role: 'admin', confirmed: 'yes' })).location, '/dashboard/team?done=role_changed', 'then may step down');
  t.equal(await roleOf('owner@team2.example.com'), 'admin');
  t.ok(await signedOut(owner), 'their own sessions ended too');

  const other = await h.newMerchant();
  await inviteUser(h, other.merchantId, 'someone@other.example.com', 'viewer');
  const stranger = await idOf('someone@other.example.com');
  t.ok(await signedOut(admin), 'the promoted admin signs in again, as an owner');
  const c = new FormClient(h.url);
  t.equal((await c.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'admin@team2.example.com', password: PASSWORD })).status, 303);
  const cs = FormClient.csrf(await c.get('/dashboard/team'));
  t.equal((await c.post(`/dashboard/team/${stranger}/remove`, { csrf_token: cs, confirmed: 'yes' })).status, 404, 'another merchant\'s member is not found');
  t.equal(await roleOf('someone@other.example.com'), 'viewer');
});

t.test('two owners demoting each other at once: the second change waits for the first and is refused', async (t) => {
  const m = await h.newMerchant();
  await inviteUser(h, m.merchantId, 'a@race.example.com');
  await inviteUser(h, m.merchantId, 'b@race.example.com');
  const [a, b] = [await idOf('a@race.example.com'), await idOf('b@race.example.com')];
  // The first change, held open in the middle: b demoted, not yet committed.
  const first = await knex.transaction();
  t.equal(await lockOwners(first, m.merchantId), 2);
  await first('dashboard_users').where({ id: b }).update({ role: 'admin' });
  const second = changeRole(h.app.services, m.merchantId, { role: 'owner' }, a, 'admin').then(() => 'changed', (err) => err);
  await new Promise((r) => setTimeout(r, 300));
  await first.commit();
  const outcome = await second;
  t.ok(outcome instanceof TeamChangeRefused && outcome.problem === 'last_owner', 'refused: a is the last owner once b\'s demotion is in');
  t.equal(await roleOf('a@race.example.com'), 'owner', 'one owner left');
});
