// Signed in: the Team page (issue 43 point 1). Every member reads it; an owner or an admin invites a
// member (once per form: the answer shows the one-time invitation link, as the operator API does),
// changes a role and removes a member (each confirmed). The team's rules (commands/dashboard-team.ts)
// refuse what the reader's role may not do to that member (403) and taking away the last owner (400).
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { DomainError } from '../../domain/errors.ts';
import { isRole, type Role } from '../../domain/dashboard-roles.ts';
import { inviteUser, listUsers, normalizeEmail } from '../../commands/dashboard-users.ts';
import { TeamChangeRefused, changeRole, removeMember } from '../../commands/dashboard-team.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { Refusal } from '../refusal.ts';
import { can } from '../permissions.ts';
import { ROLE_LABELS } from '../role-words.ts';
import { BASE } from '../pages/layout.ts';
import { teamPage, type Invitation, type TeamForm } from '../pages/team.ts';
import { confirmPage } from '../pages/confirm.ts';
import { alreadyDonePage } from '../pages/already-done.ts';
import { once } from '../form-once.ts';
import { done, field, locals, nonce, send } from '../http.ts';

const PROBLEMS: Record<TeamChangeRefused['problem'], MessageKey> = {
  not_allowed: 'team.problem.not_allowed', owner_protected: 'team.problem.owner_protected',
  owner_grant: 'team.problem.owner_grant', last_owner: 'team.problem.last_owner',
};

async function show(s: ApiServices, req: Request, res: Response, status = 200, o: { invitation?: Invitation; error?: string; form?: TeamForm } = {}): Promise<void> {
  const v = locals(res);
  send(res, status, teamPage(v, await listUsers(s.knex, v.session.merchantId), { info: done(req, res), ...o }));
}

/** A change the rules refuse, on the Team page: 403 for what the reader's role may not do, 400 for the last owner. */
async function refused(s: ApiServices, req: Request, res: Response, err: unknown, form?: TeamForm): Promise<void> {
  if (err instanceof TeamChangeRefused) {
    return show(s, req, res, err.problem === 'last_owner' ? 400 : 403, { error: locals(res).t(PROBLEMS[err.problem]), ...(form ? { form } : {}) });
  }
  if (err instanceof DomainError && err.code === 'not_found') throw new Refusal('team.error.member_not_found', {}, 'not_found');
  // The one other refusal inviteUser gives for a well-formed address: another merchant's.
  if (err instanceof DomainError && err.code === 'bad_request' && form) return show(s, req, res, 400, { error: locals(res).t('team.error.email_taken'), form });
  throw err;
}

const roleField = (req: Request): Role => {
  const role = field(req, 'role');
  if (!isRole(role)) throw new Refusal('team.error.role', {}, 'bad_request', [{ field: 'role', message: 'must be one of the roles' }]);
  return role;
};

async function invite(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const form: TeamForm = { email: field(req, 'email').trim().slice(0, 254), role: isRole(field(req, 'role')) ? (field(req, 'role') as Role) : '' };
  const email = normalizeEmail(form.email);
  if (!email) return show(s, req, res, 400, { error: v.t('team.error.email'), form });
  const role = roleField(req);
  try {
    const made = await once(s, v.session, nonce(req), `${BASE}/team/invite`,
      () => inviteUser(s, v.session.merchantId, email, role, { role: v.session.role }), (r) => ({ action: 'member_invited', member_id: r.user.id }));
    if (made.kind === 'repeat') return send(res, 409, alreadyDonePage(v, made.summary));
    const url = `${req.protocol}://${req.header('host') ?? ''}${BASE}/invite?token=${made.result.token}`;
    await show(s, req, res, 201, { invitation: { email, url, expiresAt: made.result.expiresAt.toISOString() } });
  } catch (err) {
    await refused(s, req, res, err, form);
  }
}

async function setRole(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const memberId = String(req.params.memberId);
  const role = roleField(req);
  if (field(req, 'confirmed') !== 'yes') {
    const member = (await listUsers(s.knex, v.session.merchantId)).find((m) => m.id === memberId);
    if (!member) throw new Refusal('team.error.member_not_found', {}, 'not_found');
    return send(res, 200, confirmPage(v, {
      title: v.t('team.change_role_title'), question: v.t('team.change_role_confirm', { email: member.email, role: v.t(ROLE_LABELS[role]) }),
      action: `${BASE}/team/${memberId}/role`, button: v.t('team.change_role'), fields: { role }, back: `${BASE}/team`,
    }));
  }
  try {
    const changed = await changeRole(s, v.session.merchantId, { role: v.session.role }, memberId, role);
    res.redirect(303, `${BASE}/team?done=${changed ? 'role_changed' : 'role_same'}`);
  } catch (err) {
    await refused(s, req, res, err);
  }
}

async function remove(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const memberId = String(req.params.memberId);
  if (field(req, 'confirmed') !== 'yes') {
    const member = (await listUsers(s.knex, v.session.merchantId)).find((m) => m.id === memberId);
    if (!member) throw new Refusal('team.error.member_not_found', {}, 'not_found');
    return send(res, 200, confirmPage(v, {
      title: v.t('team.remove_title'), question: v.t('team.remove_question', { email: member.email }),
      action: `${BASE}/team/${memberId}/remove`, button: v.t('team.remove'), fields: {}, back: `${BASE}/team`,
    }));
  }
  try {
    await removeMember(s, v.session.merchantId, { role: v.session.role }, memberId);
    res.redirect(303, `${BASE}/team?done=member_removed`);
  } catch (err) {
    await refused(s, req, res, err);
  }
}

export function addTeamRoutes(r: Router, s: ApiServices): void {
  r.get('/team', can('team:read'), (req, res) => show(s, req, res));
  r.post('/team/invite', can('team:manage'), (req, res) => invite(s, req, res));
  r.post('/team/:memberId/role', can('team:manage'), (req, res) => setRole(s, req, res));
  r.post('/team/:memberId/remove', can('team:manage'), (req, res) => remove(s, req, res));
}
