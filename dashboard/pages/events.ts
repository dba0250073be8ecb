// The webhook event log (the data of GET /events) with filters, and one event with every delivery
// attempt and a redeliver button (the effect of POST /events/{id}/redeliver).
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import type { EventView } from '../../projections/webhook-events.ts';
import { DELIVERY_FILTERS, EVENT_TYPES } from '../data.ts';
import { BASE, badge, csrfField, nonceField, notice, page, pager, when } from './layout.ts';

const resourceLink = (type: string, id: string) =>
  ['payin', 'payout', 'transfer'].includes(type) ? html`<a href="${BASE}/${type}s/${id}"><code>${id}</code></a>` : html`<code>${id}</code>`;

export function eventsTable(events: EventView[]): Html {
  if (events.length === 0) return html`<p class="empty">No events yet.</p>`;
  return html`<div class="table-wrap"><table class="events">
<caption class="sr-only">Webhook events</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Resource</th><th scope="col">Created</th><th scope="col">Delivery</th><th scope="col">Attempts</th></tr></thead>
<tbody>
${events.map((e) => html`<tr data-event-id="${e.id}">
  <td><a href="${BASE}/events/${e.id}">${e.event}</a></td>
  <td>${e.data.type} ${resourceLink(e.data.type, e.data.id)}</td>
  <td>${when(e.created_at)}</td>
  <td>${badge(e.delivery_status)}</td>
  <td class="num">${e.attempt_count}</td>
</tr>`)}
</tbody></table></div>`;
}

export interface EventsFilter { delivery_status?: string | undefined; type?: string | undefined }

export function eventsPage(session: Session, events: EventView[], nextCursor: string | null, f: EventsFilter): Html {
  return page(session, 'Event log', 'events', html`
<form method="get" action="${BASE}/events" class="filters" role="search" aria-label="Filter events">
  <label for="f-status">Delivery</label>
  <select id="f-status" name="delivery_status"><option value="">any</option>
  ${DELIVERY_FILTERS.map((s) => html`<option value="${s}"${f.delivery_status === s ? html` selected` : ''}>${s.replace('_', ' ')}</option>`)}</select>
  <label for="f-type">Resource</label>
  <select id="f-type" name="type"><option value="">any</option>
  ${EVENT_TYPES.map((s) => html`<option value="${s}"${f.type === s ? html` selected` : ''}>${s}</option>`)}</select>
  <button type="submit">Filter</button>
</form>
${eventsTable(events)}
${pager(nextCursor, { delivery_status: f.delivery_status, type: f.type }, `${BASE}/events`)}`);
}

export function eventPage(session: Session, e: EventView, o: { info?: string | undefined; error?: string | undefined; canRedeliver: boolean }): Html {
  return page(session, e.event, 'events', html`
${notice(o.info)}${notice(o.error, 'error')}
<dl class="facts">
<dt>Event id</dt><dd><code>${e.id}</code></dd>
<dt>Resource</dt><dd>${e.data.type} ${resourceLink(e.data.type, e.data.id)}</dd>
<dt>Created</dt><dd>${when(e.created_at)}</dd>
<dt>Delivery</dt><dd>${badge(e.delivery_status)}</dd>
<dt>Next attempt</dt><dd>${when(e.next_attempt_at)}</dd>
</dl>
${o.canRedeliver ? html`<form method="post" action="${BASE}/events/${e.id}/redeliver" class="inline">
  ${csrfField(session.csrfToken)}${nonceField()}
  <button type="submit">Redeliver now</button>
  <span class="help">One extra attempt at once, same body, signed afresh; the retry schedule is not changed.</span>
</form>` : html`<p class="muted">Set a webhook URL to redeliver events.</p>`}
<h2>Attempts</h2>
${e.attempts.length === 0 ? html`<p class="empty">No attempt yet.</p>` : html`<div class="table-wrap"><table class="attempts">
<caption class="sr-only">Delivery attempts</caption>
<thead><tr><th scope="col">#</th><th scope="col">Trigger</th><th scope="col">When</th><th scope="col">URL</th><th scope="col">Answer</th><th scope="col">Time</th><th scope="col">Result</th></tr></thead>
<tbody>
${e.attempts.map((a) => html`<tr data-attempt="${a.attempt}">
  <td class="num">${a.attempt}</td><td>${a.trigger}</td><td>${when(a.attempted_at)}</td><td class="wrap">${a.url ?? '—'}</td>
  <td>${a.status_code !== null ? html`HTTP ${a.status_code}` : html`<span class="muted">${a.error ?? 'no answer'}</span>`}</td>
  <td class="num">${a.duration_ms} ms</td><td>${badge(a.succeeded ? 'delivered' : 'failed')}</td>
</tr>`)}
</tbody></table></div>`}
<h2>Body</h2>
<pre class="code">${JSON.stringify({ id: e.id, event: e.event, created_at: e.created_at, data: e.data }, null, 2)}</pre>
<p><a href="${BASE}/events">← Event log</a></p>`);
}
