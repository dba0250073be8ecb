// A merchant's team (issue 43): changing a member's role and removing a member, checked against the
// rules of domain/dashboard-roles.ts. Each change runs in one transaction that locks the merchant's
// owners first, always before any other member's row and in id order (two changes at once cannot
// both take the last owner away, nor wait for each other's locks), and ends the member's
// sessions in that same transaction: a member whose role changed signs in again under the new role;
// a removed member's pages stop at once.
import type { Knex } from 'knex';
import type { Services } from './services.ts';
import { DomainError } from '../domain/errors.ts';
import { lastOwnerProblem, teamChangeProblem, type Role, type TeamProblem } from '../domain/dashboard-roles.ts';

const MESSAGES: Record<TeamProblem, string> = {
  not_allowed: 'Only an owner or an admin may change the team',
  owner_protected: 'Only an owner may change or remove an owner',
  owner_grant: 'Only an owner may make another member an owner',
  last_owner: 'The merchant\'s last owner stays an owner: make another member owner first',
};

/** A change the team's rules refuse; `problem` names which rule (the dashboard says it in the page's language). */
export class TeamChangeRefused extends DomainError {
  constructor(readonly problem: TeamProblem) {
    super(problem === 'not_allowed' ? 'forbidden' : 'bad_request', MESSAGES[problem], [{ field: 'role', message: MESSAGES[problem] }]);
  }
}

/** Who changes the team: a member with their role, or the operator (bound only by the last-owner rule). */
export type TeamActor = { role: Role } | 'operator';

/** Locks the merchant's owners (the first lock of any team change); answers how many there are. */
export async function lockOwners(tx: Knex.Transaction, merchantId: string): Promise<number> {
  return (await tx('dashboard_users').where({ merchant_id: merchantId, role: 'owner' }).orderBy('id').forUpdate().select('id')).length;
}

/** Refuses a change the rules forbid; `owners` as lockOwners counted them. */
export function checkTeamChange(owners: number, by: TeamActor, targetRole: Role | undefined, to: Role | 'removed'): void {
  const problem = by === 'operator'
    ? lastOwnerProblem(targetRole, to, owners)
    : teamChangeProblem({ actorRole: by.role, targetRole, to, owners });
  if (problem) throw new TeamChangeRefused(problem);
}

async function memberOf(tx: Knex.Transaction, merchantId: string, memberId: string): Promise<{ id: string; role: Role }> {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(memberId);
  const m = uuid ? await tx('dashboard_users').where({ id: memberId, merchant_id: merchantId }).forUpdate().first('id', 'role') : undefined;
  if (!m) throw new DomainError('not_found', 'Member not found');
  return m as { id: string; role: Role };
}

/** Gives a member another role; their sessions end. Answers whether anything changed (the same role: nothing, sessions kept). */
export async function changeRole(s: Services, merchantId: string, by: TeamActor, memberId: string, role: Role): Promise<boolean> {
  return s.knex.transaction(async (tx) => {
    const owners = await lockOwners(tx, merchantId);
    const member = await memberOf(tx, merchantId, memberId);
    if (member.role === role) return false;
    checkTeamChange(owners, by, member.role, role);
    await tx('dashboard_users').where({ id: member.id }).update({ role });
    await tx('dashboard_sessions').where({ user_id: member.id }).delete();
    return true;
  });
}

/** Removes a member from the team: their account and, in the same transaction, their sessions. */
export async function removeMember(s: Services, merchantId: string, by: TeamActor, memberId: string): Promise<void> {
  await s.knex.transaction(async (tx) => {
    const owners = await lockOwners(tx, merchantId);
    const member = await memberOf(tx, merchantId, memberId);
    checkTeamChange(owners, by, member.role, 'removed');
    await tx('dashboard_sessions').where({ user_id: member.id }).delete();
    await tx('dashboard_users').where({ id: member.id }).delete();
  });
}
