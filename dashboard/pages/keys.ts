// API keys: the list, create (the secret revealed once), one key's page, rotate with a grace period
// and revoke, each confirmed.
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import type { KeyView } from '../data.ts';
import { EXPIRY_CHOICES, GRACE_CHOICES } from '../actions.ts';
import { SCOPE_RESOURCES } from '../../domain/api-key-scopes.ts';
import { ACCESS_CHOICES, LEVEL_CHOICES, RESOURCE_LABELS, isReadOnly, levelField } from '../key-scopes.ts';
import { BASE, badge, confirmForm, csrfField, nonceField, notice, page, revealOnce, rich, when } from './layout.ts';

export interface Revealed {
  key: KeyView;
  apiSecret: string;
  rotated?: boolean;
}

/** The key and its secret, each named by the header a request carries it in. */
function reveal(v: View, r: Revealed): Html {
  return revealOnce(v, v.t(r.rotated ? 'dash.keys.new_secret' : 'dash.keys.new_key'), 'new-secret',
    v.t(r.rotated ? 'dash.keys.rotated_warning' : 'dash.keys.created_warning'),
    [
      { id: 'new-key', label: rich(v, 'dash.keys.key_label', { header: html`<code>X-Api-Key</code>` }), value: r.key.api_key },
      { id: 'new-secret', label: rich(v, 'dash.keys.secret_label', { header: html`<code>X-Api-Secret</code>` }), value: r.apiSecret },
    ]);
}

function actions(v: View, k: KeyView): Html {
  if (k.status === 'revoked' || !allows(v.session.role, 'keys:manage')) return html`<span class="muted">${v.t('dash.none')}</span>`;
  const csrf = v.session.csrfToken;
  return html`<div class="actions">
<form method="post" action="${BASE}/keys/${k.id}/rotate" class="inline" data-confirm="${v.t('dash.keys.rotate_question', { key: k.api_key })}">
  ${csrfField(csrf)}${nonceField()}
  <label for="grace-${k.id}">${v.t('dash.keys.old_secret_stops')}</label>
  <select id="grace-${k.id}" name="grace_seconds">${GRACE_CHOICES.map((g) => html`<option value="${g.seconds}">${v.t(g.label)}</option>`)}</select>
  <button type="submit">${v.t('dash.keys.rotate')}</button>
</form>
${confirmForm(`${BASE}/keys/${k.id}/revoke`, csrf, v.t('dash.keys.revoke'), v.t('dash.keys.revoke_question', { key: k.api_key }))}
</div>`;
}

/** What the key may do: full access, read-only, or its scopes as the API names them. */
function access(v: View, k: KeyView): Html {
  if (k.scopes.includes('*')) return html`${v.t('dash.keys.scopes_all')}`;
  if (isReadOnly(k.scopes)) return html`${v.t('dash.keys.scopes_read_only')}`;
  return html`<ul class="scopes">${k.scopes.map((s) => html`<li><code>${s}</code></li>`)}</ul>`;
}

const ACCESS_LABELS = { all: 'dash.keys.access_all', read_only: 'dash.keys.access_read_only', custom: 'dash.keys.access_custom' } as const;
const LEVEL_LABELS = { none: 'dash.keys.level_none', read: 'dash.keys.level_read', write: 'dash.keys.level_write' } as const;

/** The create form's access choice (dashboard/key-scopes.ts reads it): full, read-only, or per resource. */
function accessFields(v: View): Html {
  return html`<fieldset class="access" aria-describedby="access-help">
<legend>${v.t('dash.keys.access')}</legend>
${ACCESS_CHOICES.map((a) => html`<label class="choice"><input type="radio" name="access" value="${a}"${a === 'all' ? html` checked` : ''}> ${v.t(ACCESS_LABELS[a])}</label>`)}
<p id="access-help" class="help">${v.t('dash.keys.access_custom_hint')}</p>
${SCOPE_RESOURCES.map((r) => html`<label for="${levelField(r)}">${v.t(RESOURCE_LABELS[r])}</label>
<select id="${levelField(r)}" name="${levelField(r)}">${LEVEL_CHOICES.map((l) => html`<option value="${l}">${v.t(LEVEL_LABELS[l])}</option>`)}</select>`)}
</fieldset>`;
}

const expires = (v: View, k: KeyView) => (k.expires_at ? when(v, k.expires_at) : html`<span class="muted">${v.t('dash.never')}</span>`);

export function keysPage(v: View, keys: KeyView[], o: { revealed?: Revealed | undefined; info?: string | undefined } = {}): Html {
  return page(v, v.t('dash.keys.title'), 'keys', html`
${notice(o.info)}
${o.revealed ? reveal(v, o.revealed) : ''}
<p>${rich(v, 'dash.keys.intro', { key_header: html`<code>X-Api-Key</code>`, secret_header: html`<code>X-Api-Secret</code>` })}</p>
${allows(v.session.role, 'keys:manage') ? html`<form method="post" action="${BASE}/keys" class="row">
  ${csrfField(v.session.csrfToken)}${nonceField()}
  <label for="expires">${v.t('dash.keys.expires')}</label>
  <select id="expires" name="expires_in_days">${EXPIRY_CHOICES.map((e) => html`<option value="${e.days}">${v.t(e.label)}</option>`)}</select>
  ${accessFields(v)}
  <button type="submit">${v.t('dash.keys.create')}</button>
</form>` : ''}
${keys.length === 0 ? html`<p class="empty">${v.t('dash.keys.none')}</p>` : html`
<div class="table-wrap"><table>
<caption class="sr-only">${v.t('dash.keys.title')}</caption>
<thead><tr><th scope="col">${v.t('dash.keys.col_key')}</th><th scope="col">${v.t('dash.col.status')}</th><th scope="col">${v.t('dash.col.created')}</th><th scope="col">${v.t('dash.keys.expires')}</th><th scope="col">${v.t('dash.keys.col_access')}</th><th scope="col">${v.t('dash.keys.col_actions')}</th></tr></thead>
<tbody>
${keys.map((k) => html`<tr data-key="${k.api_key}">
  <td><a href="${BASE}/keys/${k.id}"><code>${k.api_key}</code></a></td>
  <td>${badge(v, k.status)}</td><td>${when(v, k.created_at)}</td><td>${expires(v, k)}</td><td class="key-access">${access(v, k)}</td>
  <td>${actions(v, k)}</td>
</tr>`)}
</tbody></table></div>`}`);
}

export function keyPage(v: View, k: KeyView): Html {
  return page(v, v.t('dash.keys.key_title', { key: k.api_key }), 'keys', html`
<dl class="facts">
<dt>${v.t('dash.keys.col_key')}</dt><dd><code>${k.api_key}</code></dd>
<dt>${v.t('dash.col.status')}</dt><dd>${badge(v, k.status)}</dd>
<dt>${v.t('dash.col.created')}</dt><dd>${when(v, k.created_at)}</dd>
<dt>${v.t('dash.keys.expires')}</dt><dd>${expires(v, k)}</dd>
<dt>${v.t('dash.keys.col_access')}</dt><dd class="key-access">${access(v, k)}</dd>
</dl>
<h2>${v.t('dash.keys.actions')}</h2>
${actions(v, k)}
<p><a href="${BASE}/keys">${v.t('dash.back_to', { page: v.t('dash.keys.all') })}</a></p>`);
}
