// Webhook settings: the endpoints (CONTRACT.md §11: list, add, edit URL and filter, enable/disable,
// delete, staged rotation: pages/webhook-endpoints.ts), the first endpoint's URL as the operator sets it
// (checked by the same SSRF rules as the operator API), a signing secret revealed once (on adding an
// endpoint, setting the URL or rotating), "send test event", and the latest events.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import type { EventView } from '../../projections/webhook-events.ts';
import { BASE, confirmForm, csrfField, nonceField, notice, page, revealOnce } from './layout.ts';
import { eventsTable } from './events.ts';
import { endpointsSection } from './webhook-endpoints.ts';
import type { WebhookEndpoint } from '../../domain/webhook-endpoints.ts';

export interface WebhooksData {
  url: string | null;
  recent: EventView[];
  endpoints: WebhookEndpoint[];
  /** The event names an endpoint may filter on. */
  eventNames: string[];
  secret?: string | undefined;
  /** A staged rotation's secret: when it takes over (the current one signs until then). */
  activatesAt?: string | undefined;
  info?: string | undefined;
  error?: string | undefined;
  typedUrl?: string | undefined;
  /** ALLOW_PRIVATE_URLS: the service also accepts http:// and private or local addresses (a test or development setup). */
  allowPrivateUrls: boolean;
}

/** What the URL must be, as the service's own check (infra/url-safety.ts webhookUrlPolicy) decides it. */
function urlHint(allowPrivateUrls: boolean): Html {
  return allowPrivateUrls
    ? html`An <code>https://</code> address. This service also accepts <code>http://</code> and private or local addresses
 (<code>ALLOW_PRIVATE_URLS</code> is on, for tests and development; with it off, only public <code>https://</code> addresses are).`
    : html`An <code>https://</code> address on the public internet.`;
}

export function webhooksPage(session: Session, d: WebhooksData): Html {
  return page(session, 'Webhooks', 'webhooks', html`
${notice(d.info)}${notice(d.error, 'error')}
${d.secret ? revealOnce('Signing secret', 'signing-secret',
    d.activatesAt
      ? `Add it to your server now, beside the current one: the current secret keeps signing until ${d.activatesAt}, then this one signs every attempt (retries included).`
      : 'Your server needs it to check that each request comes from us. The previous secret (if any) no longer signs anything: every attempt from now on, retries included, is signed with this one.',
    [{ id: 'signing-secret', label: html`Signing secret, for <code>X-Service-Signature</code>`, value: d.secret }]) : ''}
${endpointsSection(session, d.endpoints, d.eventNames)}
<section aria-labelledby="url-h">
<h2 id="url-h">First endpoint's URL</h2>
<p>The URL of your first endpoint (the one the operator sets), for every event unless you change its filter above.
When a payin, payout or transfer reaches a final state we send a signed <code>POST</code> to each endpoint that takes it and retry
(1 min, 5 min, 15 min, 1 h, 4 h, 12 h) until your server answers <code>2xx</code>.</p>
<form method="post" action="${BASE}/webhooks" class="stack">
  ${csrfField(session.csrfToken)}${nonceField()}
  <label for="url">Webhook URL</label>
  <input id="url" name="url" type="url" inputmode="url" required maxlength="2000" placeholder="https://example.com/webhooks/payments"
    value="${d.typedUrl ?? d.url ?? ''}" aria-describedby="url-help">
  <p id="url-help" class="help">${urlHint(d.allowPrivateUrls)} Saving creates a new signing secret.</p>
  <button type="submit">${d.url ? 'Save URL and create a new secret' : 'Save URL'}</button>
</form>
</section>
${d.url ? html`
<section aria-labelledby="secret-h">
<h2 id="secret-h">Signing secret</h2>
<p>Each request carries <code>X-Service-Timestamp</code> and <code>X-Service-Signature: sha256=&lt;hex&gt;</code>, the
HMAC-SHA256 of <code>&lt;timestamp&gt;.&lt;raw body&gt;</code> keyed with the secret. To rotate without losing deliveries,
let your server accept both secrets for a while.</p>
${confirmForm(`${BASE}/webhooks/rotate-secret`, session.csrfToken, 'Rotate signing secret', 'Create a new signing secret? The current one stops signing at once.', nonceField())}
</section>
<section aria-labelledby="test-h">
<h2 id="test-h">Test your endpoint</h2>
<p>Sends a <code>webhook.test</code> event (no money moves) through the normal delivery: signed, retried, and listed in the event log.</p>
<form method="post" action="${BASE}/webhooks/test" class="inline">
  ${csrfField(session.csrfToken)}${nonceField()}
  <button type="submit">Send test event</button>
</form>
</section>` : ''}
<section aria-labelledby="recent-h">
<h2 id="recent-h">Latest events</h2>
${eventsTable(d.recent)}
<p><a href="${BASE}/events">Full event log →</a></p>
</section>`);
}
