// The Webhooks page's endpoint list (CONTRACT.md §11): each endpoint with its URL, event filter and
// status, a form to edit URL, filter and description, enable/disable, delete and a staged secret
// rotation (each destructive action confirmed), and the form to add one.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import { ALL_EVENTS, type WebhookEndpoint } from '../../domain/webhook-endpoints.ts';
import { BASE, badge, confirmForm, csrfField, nonceField, when } from './layout.ts';

const ACTIVATE_OPTIONS = [
  { seconds: 86_400, label: 'In 24 hours (time to add it to your server)' },
  { seconds: 3600, label: 'In 1 hour' },
  { seconds: 0, label: 'Immediately (deliveries fail until your server has it)' },
];

/** The event-filter checkboxes: "every event", or the names ticked. */
function eventBoxes(id: string, names: string[], chosen: string[]): Html {
  const all = chosen.includes(ALL_EVENTS);
  return html`<fieldset class="events" aria-describedby="${id}-events-help">
  <legend>Events</legend>
  <label><input type="checkbox" name="events" value="${ALL_EVENTS}"${all ? html` checked` : ''}> Every event (also those added later)</label>
  ${names.map((n) => html`<label><input type="checkbox" name="events" value="${n}"${!all && chosen.includes(n) ? html` checked` : ''}> <code>${n}</code></label>`)}
  <p id="${id}-events-help" class="help">Nothing ticked means every event.</p>
</fieldset>`;
}

function endpointFields(id: string, names: string[], e: { url: string; enabledEvents: string[]; description: string | null }): Html {
  return html`<label for="${id}-url">URL</label>
  <input id="${id}-url" name="url" type="url" inputmode="url" required maxlength="2000" value="${e.url}">
  <label for="${id}-description">Description <span class="muted">(optional)</span></label>
  <input id="${id}-description" name="description" maxlength="500" value="${e.description ?? ''}">
  ${eventBoxes(id, names, e.enabledEvents)}`;
}

function endpointCard(session: Session, e: WebhookEndpoint, names: string[], first: boolean): Html {
  const base = `${BASE}/webhooks/endpoints/${e.id}`;
  const toggle = e.status === 'enabled'
    ? confirmForm(`${base}/status`, session.csrfToken, 'Disable', 'Disable this endpoint? It is sent nothing (its pending deliveries end failed) until you enable it again.', html`<input type="hidden" name="status" value="disabled">`)
    : html`<form method="post" action="${base}/status" class="inline">${csrfField(session.csrfToken)}<input type="hidden" name="status" value="enabled"><button type="submit">Enable</button></form>`;
  return html`<article class="endpoint" aria-labelledby="ep-${e.id}">
<h3 id="ep-${e.id}"><code>${e.url}</code> ${badge(e.status)}${first ? html` <span class="muted">(first: the operator's URL)</span>` : ''}</h3>
<p>${e.description ?? ''} <span class="muted">Events: ${e.enabledEvents.includes(ALL_EVENTS) ? 'every event' : e.enabledEvents.join(', ')}. Updated ${when(e.updatedAt)}.</span></p>
<details><summary>Edit</summary>
<form method="post" action="${base}" class="stack">
  ${csrfField(session.csrfToken)}
  ${endpointFields(`ep-${e.id}`, names, e)}
  <button type="submit">Save endpoint</button>
</form>
</details>
<div class="row">
${toggle}
<form method="post" action="${base}/rotate-secret" class="inline" data-confirm="Create a new signing secret for this endpoint?">
  ${csrfField(session.csrfToken)}${nonceField()}
  <label for="rot-${e.id}">New secret signs</label>
  <select id="rot-${e.id}" name="activate_after_seconds">${ACTIVATE_OPTIONS.map((o) => html`<option value="${String(o.seconds)}">${o.label}</option>`)}</select>
  <button type="submit" class="danger">Rotate secret</button>
</form>
${confirmForm(`${base}/delete`, session.csrfToken, 'Delete', 'Delete this endpoint? It is sent nothing more.')}
</div>
</article>`;
}

export function endpointsSection(session: Session, endpoints: WebhookEndpoint[], names: string[]): Html {
  return html`<section aria-labelledby="endpoints-h">
<h2 id="endpoints-h">Endpoints</h2>
<p>Each endpoint gets the events its filter names, signed with its own secret, with its own retries.</p>
${endpoints.length === 0 ? html`<p class="muted">No endpoint yet.</p>` : endpoints.map((e, i) => endpointCard(session, e, names, i === 0))}
<details${endpoints.length === 0 ? html` open` : ''}><summary>Add an endpoint</summary>
<form method="post" action="${BASE}/webhooks/endpoints" class="stack">
  ${csrfField(session.csrfToken)}${nonceField()}
  ${endpointFields('new', names, { url: '', enabledEvents: [ALL_EVENTS], description: null })}
  <button type="submit">Add endpoint</button>
</form>
</details>
</section>`;
}
