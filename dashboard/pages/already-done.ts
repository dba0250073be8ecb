// The answer to a form sent a second time (reload and "Resend", double click, Back then submit): what
// the first sending did, that it was not done again, and never the secret it revealed.
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { Summary } from '../form-once.ts';
import { BASE, page, rich } from './layout.ts';

function explain(v: View, s: Summary): Html {
  const keysLink = html`<p><a href="${BASE}/keys">${v.t('dash.again.to_keys')}</a></p>`;
  const webhooksLink = html`<p><a href="${BASE}/webhooks">${v.t('dash.again.to_webhooks')}</a></p>`;
  const warn = (key: Parameters<View['t']>[0]) => html`<p class="warning">${v.t(key)}</p>`;
  switch (s.action) {
    case 'key_created':
      return html`<p>${rich(v, 'dash.again.key_created', { key: html`<code>${s.api_key ?? ''}</code>` })}</p>
${warn('dash.again.key_secret')}${keysLink}`;
    case 'key_rotated':
      return html`<p>${rich(v, 'dash.again.key_rotated', { key: html`<code>${s.api_key ?? ''}</code>` })}</p>
${warn('dash.again.key_rotated_secret')}${keysLink}`;
    case 'webhook_set':
    case 'webhook_secret_rotated':
      return html`<p>${v.t(s.action === 'webhook_set' ? 'dash.again.webhook_set' : 'dash.again.webhook_rotated')}</p>
${warn('dash.again.signing_secret')}${webhooksLink}`;
    case 'endpoint_created':
    case 'endpoint_secret_rotated':
      return html`<p>${v.t(s.action === 'endpoint_created' ? 'dash.again.endpoint_created' : 'dash.again.endpoint_rotated')}</p>
${warn('dash.again.signing_secret')}${webhooksLink}`;
    case 'link_created':
      return html`<p>${rich(v, 'dash.again.link_created', { link: html`<a href="${BASE}/links/${s.link_id ?? ''}"><code>${s.link_id ?? ''}</code></a>` })}</p>`;
    default:
      return html`<p>${v.t('dash.again.other')}</p>
<p><a href="${BASE}">${v.t('dash.home_link')}</a></p>`;
  }
}

export function alreadyDonePage(v: View, summary: Summary): Html {
  return page(v, v.t('dash.again.title'), '', html`<div class="notice ok" role="status">${v.t('dash.again.nothing')}</div>
${explain(v, summary)}`);
}
