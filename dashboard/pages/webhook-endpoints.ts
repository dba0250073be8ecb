// The Webhooks page's endpoint list (CONTRACT.md §11): each endpoint with its URL, event filter and
// status, a form to edit URL, filter and description, enable/disable, delete and a staged secret
// rotation (each destructive action confirmed), and the form to add one.
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import { ALL_EVENTS, type WebhookEndpoint } from '../../domain/webhook-endpoints.ts';
import { BASE, badge, confirmForm, csrfField, nonceField, rich, when } from './layout.ts';

const ACTIVATE_OPTIONS = [
  { seconds: 86_400, label: 'dash.endpoints.activate_86400' },
  { seconds: 3600, label: 'dash.endpoints.activate_3600' },
  { seconds: 0, label: 'dash.endpoints.activate_0' },
] as const;

/** The event-filter checkboxes: "every event", or the names ticked. */
function eventBoxes(v: View, id: string, names: string[], chosen: string[]): Html {
  const all = chosen.includes(ALL_EVENTS);
  return html`<fieldset class="events" aria-describedby="${id}-events-help">
  <legend>${v.t('dash.endpoints.events')}</legend>
  <label><input type="checkbox" name="events" value="${ALL_EVENTS}"${all ? html` checked` : ''}> ${v.t('dash.endpoints.every_event')}</label>
  ${names.map((n) => html`<label><input type="checkbox" name="events" value="${n}"${!all && chosen.includes(n) ? html` checked` : ''}> <code>${n}</code></label>`)}
  <p id="${id}-events-help" class="help">${v.t('dash.endpoints.nothing_ticked')}</p>
</fieldset>`;
}

function endpointFields(v: View, id: string, names: string[], e: { url: string; enabledEvents: string[]; description: string | null }): Html {
  return html`<label for="${id}-url">${v.t('dash.endpoints.url')}</label>
  <input id="${id}-url" name="url" type="url" inputmode="url" required maxlength="2000" value="${e.url}">
  <label for="${id}-description">${v.t('dash.endpoints.description')} <span class="muted">${v.t('dash.endpoints.optional')}</span></label>
  <input id="${id}-description" name="description" maxlength="500" value="${e.description ?? ''}">
  ${eventBoxes(v, id, names, e.enabledEvents)}`;
}

function endpointActions(v: View, e: WebhookEndpoint, base: string): Html {
  const csrf = v.session.csrfToken;
  const toggle = e.status === 'enabled'
    ? confirmForm(`${base}/status`, csrf, v.t('dash.endpoints.disable'), v.t('dash.endpoints.disable_question'), html`<input type="hidden" name="status" value="disabled">`)
    : html`<form method="post" action="${base}/status" class="inline">${csrfField(csrf)}<input type="hidden" name="status" value="enabled"><button type="submit">${v.t('dash.endpoints.enable')}</button></form>`;
  return html`<div class="row">
${toggle}
<form method="post" action="${base}/rotate-secret" class="inline" data-confirm="${v.t('dash.endpoints.rotate_question')}">
  ${csrfField(csrf)}${nonceField()}
  <label for="rot-${e.id}">${v.t('dash.endpoints.new_secret_signs')}</label>
  <select id="rot-${e.id}" name="activate_after_seconds">${ACTIVATE_OPTIONS.map((o) => html`<option value="${String(o.seconds)}">${v.t(o.label)}</option>`)}</select>
  <button type="submit" class="danger">${v.t('dash.endpoints.rotate')}</button>
</form>
${confirmForm(`${base}/delete`, csrf, v.t('dash.endpoints.delete'), v.t('dash.endpoints.delete_question'))}
</div>`;
}

function endpointCard(v: View, e: WebhookEndpoint, names: string[], first: boolean): Html {
  const base = `${BASE}/webhooks/endpoints/${e.id}`;
  const manage = allows(v.session.role, 'webhooks:manage');
  const events = e.enabledEvents.includes(ALL_EVENTS) ? v.t('dash.endpoints.all_events') : e.enabledEvents.join(', ');
  return html`<article class="endpoint" aria-labelledby="ep-${e.id}">
<h3 id="ep-${e.id}"><code>${e.url}</code> ${badge(v, e.status)}${first ? html` <span class="muted">${v.t('dash.endpoints.first')}</span>` : ''}</h3>
<p>${e.description ?? ''} <span class="muted">${rich(v, 'dash.endpoints.summary', { events, when: when(v, e.updatedAt) })}</span></p>
${manage ? html`<details><summary>${v.t('dash.endpoints.edit')}</summary>
<form method="post" action="${base}" class="stack">
  ${csrfField(v.session.csrfToken)}
  ${endpointFields(v, `ep-${e.id}`, names, e)}
  <button type="submit">${v.t('dash.endpoints.save')}</button>
</form>
</details>
${endpointActions(v, e, base)}` : ''}
</article>`;
}

export function endpointsSection(v: View, endpoints: WebhookEndpoint[], names: string[]): Html {
  return html`<section aria-labelledby="endpoints-h">
<h2 id="endpoints-h">${v.t('dash.endpoints.title')}</h2>
<p>${v.t('dash.endpoints.intro')}</p>
${endpoints.length === 0 ? html`<p class="muted">${v.t('dash.endpoints.none')}</p>` : endpoints.map((e, i) => endpointCard(v, e, names, i === 0))}
${allows(v.session.role, 'webhooks:manage') ? html`<details${endpoints.length === 0 ? html` open` : ''}><summary>${v.t('dash.endpoints.add_title')}</summary>
<form method="post" action="${BASE}/webhooks/endpoints" class="stack">
  ${csrfField(v.session.csrfToken)}${nonceField()}
  ${endpointFields(v, 'new', names, { url: '', enabledEvents: [ALL_EVENTS], description: null })}
  <button type="submit">${v.t('dash.endpoints.add')}</button>
</form>
</details>` : ''}
</section>`;
}
