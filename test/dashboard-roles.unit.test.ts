// The roles' table and the team's rules (domain/dashboard-roles.ts), as docs/DASHBOARD-TEAM.md states them.
import t from 'tap';
import { PERMISSIONS, ROLES, allows, teamChangeProblem, type Role } from '../domain/dashboard-roles.ts';

const granted = (role: Role) => PERMISSIONS.filter((p) => allows(role, p));

t.test('what each role may do', async (t) => {
  t.same(granted('owner'), [...PERMISSIONS], 'the owner: everything');
  t.same(granted('admin'), PERMISSIONS.filter((p) => p !== 'security:manage'), 'an admin: everything but the team\'s security settings');
  t.notOk(granted('finance').some((p) => p.startsWith('keys:')), 'finance: no keys, not even the list');
  t.ok(['refunds:create', 'statements:read', 'payment_links:manage', 'money:read'].every((p) => allows('finance', p as never)));
  t.ok(['keys:manage', 'webhooks:manage', 'events:redeliver'].every((p) => allows('developer', p as never)));
  t.notOk(allows('developer', 'refunds:create') || allows('developer', 'statements:read') || allows('developer', 'team:manage'));
  t.same(granted('viewer'), [...PERMISSIONS.filter((p) => p.endsWith(':read')), 'self:manage'], 'a viewer: every read, and its own account');
  for (const role of ROLES) t.ok(allows(role, 'self:manage') && allows(role, 'home:read'), `${role} signs out and sees home`);
});

t.test('the team\'s rules', async (t) => {
  const change = (actorRole: Role, targetRole: Role | undefined, to: Role | 'removed', owners = 2) => teamChangeProblem({ actorRole, targetRole, to, owners });
  t.equal(change('developer', 'viewer', 'finance'), 'not_allowed');
  t.equal(change('viewer', undefined, 'viewer'), 'not_allowed');
  t.equal(change('admin', 'owner', 'admin'), 'owner_protected', 'an admin cannot demote an owner');
  t.equal(change('admin', 'owner', 'removed'), 'owner_protected', 'nor remove one');
  t.equal(change('admin', 'owner', 'owner'), 'owner_protected', 'nor send an owner a new link');
  t.equal(change('admin', 'viewer', 'owner'), 'owner_grant', 'nor make one');
  t.equal(change('admin', undefined, 'owner'), 'owner_grant', 'nor invite one');
  t.equal(change('admin', 'admin', 'viewer'), undefined, 'an admin changes another admin');
  t.equal(change('owner', 'owner', 'admin', 1), 'last_owner', 'the last owner stays');
  t.equal(change('owner', 'owner', 'removed', 1), 'last_owner');
  t.equal(change('owner', 'owner', 'owner', 1), undefined, 'a new link for the last owner changes no role');
  t.equal(change('owner', 'owner', 'admin', 2), undefined, 'one of two owners may step down');
  t.equal(change('owner', undefined, 'owner'), undefined, 'an owner invites an owner');
});
