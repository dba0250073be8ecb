// The Team page (issue 43 point 1): the roles and what each may do, the members with their role and
// status, and for an owner or an admin the forms that invite a member (e-mail and role; the one-time
// invitation link shown once), change a role and remove a member. A member's row offers only what
// the reader's role may do to it (an admin sees no button on an owner's row); the server checks again.
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { DashboardUser } from '../../commands/dashboard-users.ts';
import { ROLES, allows, teamChangeProblem, type Role } from '../../domain/dashboard-roles.ts';
import { ROLE_HELP, ROLE_LABELS } from '../role-words.ts';
import { BASE, confirmForm, csrfField, nonceField, notice, page, revealOnce, rich, when } from './layout.ts';

export interface Invitation { email: string; url: string; expiresAt: string }

export interface TeamForm { email: string; role: Role | '' }

/** The roles the reader may give: all but owner for an admin. */
const grantable = (v: View): Role[] => ROLES.filter((r) => teamChangeProblem({ actorRole: v.session.role, targetRole: undefined, to: r, owners: 2 }) === undefined);

const roleOptions = (v: View, chosen: Role | '') =>
  grantable(v).map((r) => html`<option value="${r}"${r === chosen ? html` selected` : ''}>${v.t(ROLE_LABELS[r])}</option>`);

function memberActions(v: View, m: DashboardUser): Html {
  // What the reader may do to this member at all (the last-owner rule is the server's to tell).
  if (teamChangeProblem({ actorRole: v.session.role, targetRole: m.role, to: 'removed', owners: 2 }) !== undefined) return html``;
  const base = `${BASE}/team/${m.id}`;
  return html`<div class="row">
<form method="post" action="${base}/role" class="inline" data-confirm="${v.t('team.change_role_question', { email: m.email })}">
  ${csrfField(v.session.csrfToken)}
  <label for="role-${m.id}" class="sr-only">${v.t('team.new_role', { email: m.email })}</label>
  <select id="role-${m.id}" name="role">${roleOptions(v, m.role)}</select>
  <button type="submit">${v.t('team.change_role')}</button>
</form>
${confirmForm(`${base}/remove`, v.session.csrfToken, v.t('team.remove'), v.t('team.remove_question', { email: m.email }))}
</div>`;
}

function membersTable(v: View, members: DashboardUser[], manage: boolean): Html {
  return html`<div class="table-wrap"><table class="team">
<caption class="sr-only">${v.t('team.caption')}</caption>
<thead><tr><th scope="col">${v.t('team.col.member')}</th><th scope="col">${v.t('team.col.role')}</th><th scope="col">${v.t('team.col.status')}</th><th scope="col">${v.t('team.col.last_sign_in')}</th>${manage ? html`<th scope="col">${v.t('team.col.actions')}</th>` : ''}</tr></thead>
<tbody>${members.map((m) => html`<tr data-member="${m.email}" data-role="${m.role}">
  <td>${m.email}${m.id === v.session.userId ? html` <span class="muted">${v.t('team.you')}</span>` : ''}</td>
  <td>${v.t(ROLE_LABELS[m.role])}</td>
  <td>${v.t(m.password_hash ? 'team.status.active' : 'team.status.invited')}</td>
  <td>${when(v, m.last_sign_in_at === null ? '' : new Date(m.last_sign_in_at).toISOString())}</td>
  ${manage ? html`<td>${memberActions(v, m)}</td>` : ''}
</tr>`)}</tbody>
</table></div>`;
}

/** The role offered first is the least one (viewer): more is given on purpose, not by leaving the default. */
function inviteForm(v: View, f: TeamForm): Html {
  return html`<section aria-labelledby="invite-h">
<h2 id="invite-h">${v.t('team.invite.title')}</h2>
<form method="post" action="${BASE}/team/invite" class="stack">
  ${csrfField(v.session.csrfToken)}${nonceField()}
  <label for="invite-email">${v.t('team.invite.email')}</label>
  <input id="invite-email" name="email" type="email" required maxlength="254" value="${f.email}" aria-describedby="invite-help">
  <label for="invite-role">${v.t('team.invite.role')}</label>
  <select id="invite-role" name="role">${roleOptions(v, f.role === '' ? 'viewer' : f.role)}</select>
  <p id="invite-help" class="help">${v.t('team.invite.help')}</p>
  <button type="submit">${v.t('team.invite.button')}</button>
</form>
</section>`;
}

const roleList = (v: View) => html`<section aria-labelledby="roles-h"><h2 id="roles-h">${v.t('team.roles')}</h2>
<dl class="facts">${ROLES.map((r) => html`<dt>${v.t(ROLE_LABELS[r])}</dt><dd>${v.t(ROLE_HELP[r])}</dd>`)}</dl></section>`;

export function teamPage(v: View, members: DashboardUser[], o: { invitation?: Invitation; info?: string | undefined; error?: string; form?: TeamForm } = {}): Html {
  const manage = allows(v.session.role, 'team:manage');
  const link = o.invitation;
  return page(v, v.t('team.title'), 'team', html`
${notice(o.info)}${notice(o.error, 'error')}
${link ? revealOnce(v, v.t('team.invite.link_title'), 'invitation', rich(v, 'team.invite.link_warning', { when: when(v, link.expiresAt) }),
    [{ id: 'invitation-link', label: html`${v.t('team.invite.link_label', { email: link.email })}`, value: link.url }]) : ''}
${membersTable(v, members, manage)}
${manage ? inviteForm(v, o.form ?? { email: '', role: '' }) : html`<p class="muted">${v.t('team.manage_only')}</p>`}
${roleList(v)}`);
}
