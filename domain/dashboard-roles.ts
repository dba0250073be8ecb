// What each dashboard member may do (issue 43 point 1; CONTRACT §18): one role per member, one table
// from role to permissions, and the rules of changing the team. Pure: the dashboard checks every
// route against this table (dashboard/permissions.ts), the team commands check changes with
// teamChangeProblem. The reasoning behind the table is in docs/DASHBOARD-TEAM.md.

export const ROLES = ['owner', 'admin', 'developer', 'finance', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);

/** Every permission a dashboard route may need. `:read` ones guard pages (GET); the others change something. */
export const PERMISSIONS = [
  'home:read',
  'money:read',
  'statements:read',
  'refunds:create',
  'payment_links:read',
  'payment_links:manage',
  'keys:read',
  'keys:manage',
  'webhooks:read',
  'webhooks:manage',
  'events:read',
  'events:redeliver',
  'team:read',
  'team:manage',
  'audit:read',
  /** The team's own security settings (requiring two-factor sign-in for everyone): the owner's. */
  'security:manage',
  /** A member's own account: signing out, their sessions, their own two-factor enrolment. Every role. */
  'self:manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READS: Permission[] = PERMISSIONS.filter((p) => p.endsWith(':read'));

const GRANTS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS.filter((p) => p !== 'security:manage'),
  developer: [
    'home:read', 'money:read', 'payment_links:read', 'team:read', 'self:manage',
    'keys:read', 'keys:manage', 'webhooks:read', 'webhooks:manage', 'events:read', 'events:redeliver',
  ],
  finance: [
    'home:read', 'money:read', 'payment_links:read', 'team:read', 'self:manage',
    'statements:read', 'refunds:create', 'payment_links:manage',
  ],
  viewer: [...READS, 'self:manage'],
};

export const allows = (role: Role, permission: Permission): boolean => GRANTS[role].includes(permission);

/** What a change to the team would break, or undefined when it may go ahead. */
export type TeamProblem = 'not_allowed' | 'owner_protected' | 'owner_grant' | 'last_owner';

export interface TeamChange {
  actorRole: Role;
  /** The member changed (undefined: a new member invited). */
  targetRole: Role | undefined;
  /** The role given, or `removed`. */
  to: Role | 'removed';
  /** How many owners the merchant has now, the target included. */
  owners: number;
}

/**
 * Only owners and admins change the team; only an owner touches an owner or makes one (an admin
 * cannot remove or demote the owner, nor promote anyone above itself); and no change leaves the
 * merchant without an owner.
 */
export function teamChangeProblem(c: TeamChange): TeamProblem | undefined {
  if (!allows(c.actorRole, 'team:manage')) return 'not_allowed';
  if (c.actorRole !== 'owner' && (c.targetRole === 'owner' || c.to === 'owner')) return c.targetRole === 'owner' ? 'owner_protected' : 'owner_grant';
  return lastOwnerProblem(c.targetRole, c.to, c.owners);
}

/** The one rule that binds the operator too: the last owner stays an owner. */
export function lastOwnerProblem(targetRole: Role | undefined, to: Role | 'removed', owners: number): 'last_owner' | undefined {
  return targetRole === 'owner' && to !== 'owner' && owners <= 1 ? 'last_owner' : undefined;
}
