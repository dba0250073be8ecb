// The audit log page: the merchant's own changes, newest first, filtered by action, by who made them
// and by day, with the CSV export of the same filter and a pager.
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { Speech } from '../language.ts';
import type { AuditEntryView } from '../../projections/audit-log-read.ts';
import { AUDIT_ACTIONS } from '../../domain/audit-log.ts';
import { keyFor } from '../words.ts';
import { BASE, notice, page, pager, when } from './layout.ts';

export const AUDIT_PATH = `${BASE}/audit-log`;

/** The filter as typed (days as YYYY-MM-DD; `actor` is `member:<id>`, `operator`, or empty). */
export interface AuditForm { action?: string | undefined; actor?: string | undefined; from?: string | undefined; to?: string | undefined }

export interface Member { id: string; email: string }

/** A value in words where the catalogue names it, else the value itself (an action or a target type added later still shows). */
const words = (v: Speech, prefix: string, value: string) => {
  const key = keyFor(prefix, value);
  return key ? v.t(key) : value;
};
const actionWords = (v: Speech, action: string) => words(v, 'audit.action.', action);

function actorWords(v: Speech, e: AuditEntryView, members: Member[]): Html {
  if (e.actor.type === 'operator') return html`${v.t('audit.operator_named', { id: e.actor.id })}`;
  const m = members.find((x) => x.id === e.actor.id);
  return m ? html`${m.email}` : html`${v.t('audit.former_member', { id: e.actor.id })}`;
}

function entriesTable(v: Speech, entries: AuditEntryView[], members: Member[]): Html {
  if (entries.length === 0) return html`<p class="empty">${v.t('audit.none')}</p>`;
  return html`<div class="table-wrap"><table class="audit-log">
<caption class="sr-only">${v.t('audit.caption')}</caption>
<thead><tr><th scope="col">${v.t('audit.col_when')}</th><th scope="col">${v.t('audit.col_actor')}</th><th scope="col">${v.t('audit.col_action')}</th><th scope="col">${v.t('audit.col_target')}</th><th scope="col">${v.t('audit.col_address')}</th><th scope="col">${v.t('audit.col_request')}</th></tr></thead>
<tbody>
${entries.map((e) => html`<tr data-entry-id="${e.id}" data-action="${e.action}">
  <td>${when(v, e.at)}</td><td>${actorWords(v, e, members)}</td><td>${actionWords(v, e.action)}</td>
  <td>${words(v, 'audit.target.', e.target.type)} <code>${e.target.id}</code></td><td><code>${e.ip}</code></td><td><code>${e.request_id}</code></td>
</tr>`)}
</tbody></table></div>`;
}

const selected = (on: boolean) => (on ? html` selected` : '');

function filters(v: Speech, f: AuditForm, members: Member[]): Html {
  return html`<form method="get" action="${AUDIT_PATH}" class="filters" role="search" aria-label="${v.t('audit.filter')}">
  <label for="f-action">${v.t('audit.filter_action')}</label>
  <select id="f-action" name="action"><option value="">${v.t('dash.any')}</option>
  ${AUDIT_ACTIONS.map((a) => html`<option value="${a}"${selected(f.action === a)}>${actionWords(v, a)}</option>`)}</select>
  <label for="f-actor">${v.t('audit.filter_member')}</label>
  <select id="f-actor" name="actor"><option value="">${v.t('audit.any')}</option>
  <option value="operator"${selected(f.actor === 'operator')}>${v.t('audit.operator')}</option>
  ${members.map((m) => html`<option value="member:${m.id}"${selected(f.actor === `member:${m.id}`)}>${m.email}</option>`)}</select>
  <label for="f-from">${v.t('audit.filter_from')}</label><input id="f-from" type="date" name="from" value="${f.from ?? ''}">
  <label for="f-to">${v.t('audit.filter_to')}</label><input id="f-to" type="date" name="to" value="${f.to ?? ''}">
  <button type="submit">${v.t('audit.filter_button')}</button>
</form>`;
}

/** The form's values that are set, as query parameters (the pager's and the export's). */
export const formParams = (f: AuditForm): Record<string, string | undefined> => ({ action: f.action, actor: f.actor, from: f.from, to: f.to });

export function auditLogPage(
  v: View, entries: AuditEntryView[], nextCursor: string | null, f: AuditForm, members: Member[], error?: string,
): Html {
  const q = new URLSearchParams({ format: 'csv' });
  for (const [k, val] of Object.entries(formParams(f))) if (val) q.set(k, val);
  return page(v, v.t('audit.title'), 'audit', html`
<p>${v.t('audit.intro')}</p>
${notice(error, 'error')}
${filters(v, f, members)}
<p><a href="${AUDIT_PATH}?${q.toString()}" download>${v.t('audit.export')}</a></p>
${entriesTable(v, entries, members)}
${pager(v, nextCursor, formParams(f), AUDIT_PATH)}`);
}
