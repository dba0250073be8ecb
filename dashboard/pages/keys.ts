// API keys: the list, create (the secret revealed once), one key's page, rotate with a grace period
// and revoke, each confirmed.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import type { KeyView } from '../data.ts';
import { EXPIRY_CHOICES, GRACE_CHOICES } from '../actions.ts';
import { BASE, badge, confirmForm, csrfField, nonceField, notice, page, revealOnce, when } from './layout.ts';

export interface Revealed {
  key: KeyView;
  apiSecret: string;
  rotated?: boolean;
}

/** The key and its secret, each named by the header a request carries it in. */
function reveal(r: Revealed): Html {
  return revealOnce(r.rotated ? 'New secret for this key' : 'Your new API key', 'new-secret',
    r.rotated
      ? 'Put the secret in your servers now. When the grace period you chose ends, the previous secret stops working.'
      : 'We keep only a hash of the secret and cannot show it again. If it is lost, rotate the key to get a new secret.',
    [
      { id: 'new-key', label: html`API key, header <code>X-Api-Key</code>`, value: r.key.api_key },
      { id: 'new-secret', label: html`API secret, header <code>X-Api-Secret</code>`, value: r.apiSecret },
    ]);
}

function actions(session: Session, k: KeyView): Html {
  if (k.status === 'revoked') return html`<span class="muted">none</span>`;
  return html`<div class="actions">
<form method="post" action="${BASE}/keys/${k.id}/rotate" class="inline" data-confirm="Rotate ${k.api_key}? A new secret is created; the old one stops working after the grace period.">
  ${csrfField(session.csrfToken)}${nonceField()}
  <label for="grace-${k.id}">Old secret stops</label>
  <select id="grace-${k.id}" name="grace_seconds">${GRACE_CHOICES.map((g) => html`<option value="${g.seconds}">${g.label.toLowerCase()}</option>`)}</select>
  <button type="submit">Rotate</button>
</form>
${confirmForm(`${BASE}/keys/${k.id}/revoke`, session.csrfToken, 'Revoke', `Revoke ${k.api_key}? Every request made with it is refused from now on. This cannot be undone.`)}
</div>`;
}

export function keysPage(session: Session, keys: KeyView[], o: { revealed?: Revealed | undefined; info?: string | undefined } = {}): Html {
  return page(session, 'API keys', 'keys', html`
${notice(o.info)}
${o.revealed ? reveal(o.revealed) : ''}
<p>Your servers authenticate with a key and its secret: headers <code>X-Api-Key</code> and <code>X-Api-Secret</code>.
Keep secrets on your servers only, never in a browser or a mobile app.</p>
<form method="post" action="${BASE}/keys" class="row">
  ${csrfField(session.csrfToken)}${nonceField()}
  <label for="expires">Expires</label>
  <select id="expires" name="expires_in_days">${EXPIRY_CHOICES.map((e) => html`<option value="${e.days}">${e.label.toLowerCase()}</option>`)}</select>
  <button type="submit">Create API key</button>
</form>
${keys.length === 0 ? html`<p class="empty">No API keys yet.</p>` : html`
<div class="table-wrap"><table>
<caption class="sr-only">API keys</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
<tbody>
${keys.map((k) => html`<tr data-key="${k.api_key}">
  <td><a href="${BASE}/keys/${k.id}"><code>${k.api_key}</code></a></td>
  <td>${badge(k.status)}</td><td>${when(k.created_at)}</td><td>${k.expires_at ? when(k.expires_at) : html`<span class="muted">never</span>`}</td>
  <td>${actions(session, k)}</td>
</tr>`)}
</tbody></table></div>`}`);
}

export function keyPage(session: Session, k: KeyView): Html {
  return page(session, `API key ${k.api_key}`, 'keys', html`
<dl class="facts">
<dt>Key</dt><dd><code>${k.api_key}</code></dd>
<dt>Status</dt><dd>${badge(k.status)}</dd>
<dt>Created</dt><dd>${when(k.created_at)}</dd>
<dt>Expires</dt><dd>${k.expires_at ? when(k.expires_at) : 'never'}</dd>
</dl>
<h2>Actions</h2>
${actions(session, k)}
<p><a href="${BASE}/keys">← All API keys</a></p>`);
}
