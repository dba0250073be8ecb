// The answer to a form sent a second time (reload and "Resend", double click, Back then submit): what
// the first sending did, that it was not done again, and never the secret it revealed.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import type { Summary } from '../form-once.ts';
import { BASE, page } from './layout.ts';

const KEYS_LINK = html`<p><a href="${BASE}/keys">Go to API keys</a></p>`;
const WEBHOOKS_LINK = html`<p><a href="${BASE}/webhooks">Go to Webhooks</a></p>`;

function explain(s: Summary): Html {
  switch (s.action) {
    case 'key_created':
      return html`<p>This form was already sent: it created the API key <code>${s.api_key ?? ''}</code>. No other key was created.</p>
<p class="warning">The secret was shown once and cannot be shown again; rotate the key or create another if you lost it.</p>${KEYS_LINK}`;
    case 'key_rotated':
      return html`<p>This form was already sent: it rotated the API key <code>${s.api_key ?? ''}</code>. It was not rotated again.</p>
<p class="warning">The new secret was shown once and cannot be shown again; rotate the key again or create another if you lost it.</p>${KEYS_LINK}`;
    case 'webhook_set':
    case 'webhook_secret_rotated':
      return html`<p>This form was already sent: ${s.action === 'webhook_set' ? 'it saved the webhook URL and created a signing secret' : 'it rotated the signing secret'}. Nothing was changed again.</p>
<p class="warning">The signing secret was shown once and cannot be shown again; rotate it if you lost it.</p>${WEBHOOKS_LINK}`;
    case 'endpoint_created':
    case 'endpoint_secret_rotated':
      return html`<p>This form was already sent: ${s.action === 'endpoint_created' ? 'it added the webhook endpoint' : "it rotated the endpoint's signing secret"}. Nothing was done again.</p>
<p class="warning">The signing secret was shown once and cannot be shown again; rotate it if you lost it.</p>${WEBHOOKS_LINK}`;
    default:
      return html`<p>This form was already sent, and what it asked for was done then. It was not done again.</p>
<p><a href="${BASE}">Dashboard home</a></p>`;
  }
}

export function alreadyDonePage(session: Session, summary: Summary): Html {
  return page(session, 'Already done', '', html`<div class="notice ok" role="status">Nothing was done this time.</div>
${explain(summary)}`);
}
