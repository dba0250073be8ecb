// Webhook settings: the endpoints (CONTRACT.md §11: list, add, edit URL and filter, enable/disable,
// delete, staged rotation: pages/webhook-endpoints.ts), the first endpoint's URL as the operator sets it
// (checked by the same SSRF rules as the operator API), a signing secret revealed once (on adding an
// endpoint, setting the URL or rotating), "send test event", and the latest events.
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import type { EventView } from '../../projections/webhook-events.ts';
import { BASE, confirmForm, csrfField, nonceField, notice, page, revealOnce, rich, when } from './layout.ts';
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
function urlHint(v: View, allowPrivateUrls: boolean): Html {
  const https = html`<code>https://</code>`;
  return allowPrivateUrls
    ? rich(v, 'dash.webhooks.url_hint_private', { https, http: html`<code>http://</code>`, flag: html`<code>ALLOW_PRIVATE_URLS</code>` })
    : rich(v, 'dash.webhooks.url_hint_public', { https });
}

function revealedSecret(v: View, d: WebhooksData): Html {
  if (!d.secret) return html``;
  const warning = d.activatesAt ? rich(v, 'dash.webhooks.staged_warning', { when: when(v, d.activatesAt) }) : v.t('dash.webhooks.now_warning');
  return revealOnce(v, v.t('dash.webhooks.secret_title'), 'signing-secret', warning,
    [{ id: 'signing-secret', label: rich(v, 'dash.webhooks.secret_label', { header: html`<code>X-Service-Signature</code>` }), value: d.secret }]);
}

function firstUrl(v: View, d: WebhooksData): Html {
  return html`<section aria-labelledby="url-h">
<h2 id="url-h">${v.t('dash.webhooks.first_url')}</h2>
<p>${rich(v, 'dash.webhooks.first_url_intro', { post: html`<code>POST</code>`, ok: html`<code>2xx</code>` })}</p>
<form method="post" action="${BASE}/webhooks" class="stack">
  ${csrfField(v.session.csrfToken)}${nonceField()}
  <label for="url">${v.t('dash.webhooks.url_label')}</label>
  <input id="url" name="url" type="url" inputmode="url" required maxlength="2000" placeholder="https://example.com/webhooks/payments"
    value="${d.typedUrl ?? d.url ?? ''}" aria-describedby="url-help">
  <p id="url-help" class="help">${urlHint(v, d.allowPrivateUrls)} ${v.t('dash.webhooks.saving_creates')}</p>
  <button type="submit">${v.t(d.url ? 'dash.webhooks.save_and_rotate' : 'dash.webhooks.save')}</button>
</form>
</section>`;
}

function signingAndTest(v: View): Html {
  const csrf = v.session.csrfToken;
  return html`
<section aria-labelledby="secret-h">
<h2 id="secret-h">${v.t('dash.webhooks.secret_title')}</h2>
<p>${rich(v, 'dash.webhooks.signing_intro', {
    timestamp: html`<code>X-Service-Timestamp</code>`, signature: html`<code>X-Service-Signature: sha256=&lt;hex&gt;</code>`, signed: html`<code>&lt;timestamp&gt;.&lt;raw body&gt;</code>`,
  })}</p>
${confirmForm(`${BASE}/webhooks/rotate-secret`, csrf, v.t('dash.webhooks.rotate'), v.t('dash.webhooks.rotate_question'), nonceField())}
</section>
<section aria-labelledby="test-h">
<h2 id="test-h">${v.t('dash.webhooks.test_title')}</h2>
<p>${rich(v, 'dash.webhooks.test_intro', { event: html`<code>webhook.test</code>` })}</p>
<form method="post" action="${BASE}/webhooks/test" class="inline">
  ${csrfField(csrf)}${nonceField()}
  <button type="submit">${v.t('dash.webhooks.test_button')}</button>
</form>
</section>`;
}

export function webhooksPage(v: View, d: WebhooksData): Html {
  return page(v, v.t('dash.webhooks.title'), 'webhooks', html`
${notice(d.info)}${notice(d.error, 'error')}
${revealedSecret(v, d)}
${endpointsSection(v, d.endpoints, d.eventNames)}
${allows(v.session.role, 'webhooks:manage') ? html`${firstUrl(v, d)}
${d.url ? signingAndTest(v) : ''}` : ''}
<section aria-labelledby="recent-h">
<h2 id="recent-h">${v.t('dash.webhooks.latest')}</h2>
${eventsTable(v, d.recent)}
<p><a href="${BASE}/events">${v.t('dash.webhooks.full_log')}</a></p>
</section>`);
}
