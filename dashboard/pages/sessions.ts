// A member's own sessions (issue 43 point 3): each with its device (browser and system, from the
// User-Agent), the address it signed in from, when it signed in and was last used, "this session",
// and a button that ends it; one more ends every other session.
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { MemberSession } from '../member-sessions.ts';
import { deviceOf } from '../user-agent.ts';
import { BASE, confirmForm, notice, page, when } from './layout.ts';

function device(v: View, ua: string | null): string {
  const d = deviceOf(ua);
  return v.t('team.sessions.device', { browser: d.browser ?? v.t('team.sessions.unknown_browser'), system: d.system ?? v.t('team.sessions.unknown_system') });
}

function row(v: View, m: MemberSession): Html {
  const question = v.t(m.current ? 'team.sessions.end_this_question' : 'team.sessions.end_question');
  return html`<tr data-session="${m.publicId}"${m.current ? html` data-current="yes"` : ''}>
  <td>${device(v, m.userAgent)}${m.current ? html` <strong class="badge">${v.t('team.sessions.this')}</strong>` : ''}</td>
  <td>${m.ip ?? v.t('team.sessions.unknown_address')}</td>
  <td>${when(v, m.createdAt)}</td><td>${when(v, m.lastSeenAt)}</td>
  <td>${confirmForm(`${BASE}/sessions/${m.publicId}/end`, v.session.csrfToken, v.t('team.sessions.end'), question)}</td>
</tr>`;
}

export function sessionsPage(v: View, sessions: MemberSession[], info?: string): Html {
  const others = sessions.some((m) => !m.current);
  return page(v, v.t('team.sessions.title'), 'sessions', html`
${notice(info)}
<p>${v.t('team.sessions.intro')}</p>
<div class="table-wrap"><table class="sessions">
<caption class="sr-only">${v.t('team.sessions.caption')}</caption>
<thead><tr><th scope="col">${v.t('team.sessions.col_device')}</th><th scope="col">${v.t('team.sessions.col_address')}</th><th scope="col">${v.t('team.sessions.col_created')}</th><th scope="col">${v.t('team.sessions.col_last_used')}</th><th scope="col">${v.t('team.sessions.col_actions')}</th></tr></thead>
<tbody>${sessions.map((m) => row(v, m))}</tbody>
</table></div>
${others ? confirmForm(`${BASE}/sessions/end-others`, v.session.csrfToken, v.t('team.sessions.end_others'), v.t('team.sessions.end_others_question')) : ''}`);
}
