// The webhook event log (the data of GET /events) with filters, and one event with every delivery
// attempt and a redeliver button (the effect of POST /events/{id}/redeliver).
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import type { Speech } from '../language.ts';
import type { EventView } from '../../projections/webhook-events.ts';
import { DELIVERY_FILTERS, EVENT_TYPES } from '../data.ts';
import { keyFor } from '../words.ts';
import { BASE, badge, csrfField, nonceField, notice, page, pager, statusLabel, when } from './layout.ts';

/** A resource type or a trigger in words (the value itself where the catalogue has none). */
const word = (v: Speech, prefix: string, value: string) => {
  const key = keyFor(prefix, value);
  return key ? v.t(key) : value;
};

const resourceLink = (type: string, id: string) =>
  ['payin', 'payout', 'transfer'].includes(type) ? html`<a href="${BASE}/${type}s/${id}"><code>${id}</code></a>` : html`<code>${id}</code>`;

export function eventsTable(v: Speech, events: EventView[]): Html {
  if (events.length === 0) return html`<p class="empty">${v.t('dash.events.none')}</p>`;
  return html`<div class="table-wrap"><table class="events">
<caption class="sr-only">${v.t('dash.events.caption')}</caption>
<thead><tr><th scope="col">${v.t('dash.events.col_event')}</th><th scope="col">${v.t('dash.events.col_resource')}</th><th scope="col">${v.t('dash.events.col_created')}</th><th scope="col">${v.t('dash.events.col_delivery')}</th><th scope="col">${v.t('dash.events.col_attempts')}</th></tr></thead>
<tbody>
${events.map((e) => html`<tr data-event-id="${e.id}">
  <td><a href="${BASE}/events/${e.id}">${e.event}</a></td>
  <td>${word(v, 'dash.events.type.', e.data.type)} ${resourceLink(e.data.type, e.data.id)}</td>
  <td>${when(v, e.created_at)}</td>
  <td>${badge(v, e.delivery_status)}</td>
  <td class="num">${e.attempt_count}</td>
</tr>`)}
</tbody></table></div>`;
}

export interface EventsFilter { delivery_status?: string | undefined; type?: string | undefined }

export function eventsPage(v: View, events: EventView[], nextCursor: string | null, f: EventsFilter): Html {
  return page(v, v.t('dash.events.title'), 'events', html`
<form method="get" action="${BASE}/events" class="filters" role="search" aria-label="${v.t('dash.events.filter')}">
  <label for="f-status">${v.t('dash.events.delivery')}</label>
  <select id="f-status" name="delivery_status"><option value="">${v.t('dash.any')}</option>
  ${DELIVERY_FILTERS.map((s) => html`<option value="${s}"${f.delivery_status === s ? html` selected` : ''}>${statusLabel(v, s)}</option>`)}</select>
  <label for="f-type">${v.t('dash.events.resource')}</label>
  <select id="f-type" name="type"><option value="">${v.t('dash.any')}</option>
  ${EVENT_TYPES.map((s) => html`<option value="${s}"${f.type === s ? html` selected` : ''}>${word(v, 'dash.events.type.', s)}</option>`)}</select>
  <button type="submit">${v.t('dash.events.filter_button')}</button>
</form>
${eventsTable(v, events)}
${pager(v, nextCursor, { delivery_status: f.delivery_status, type: f.type }, `${BASE}/events`)}`);
}

function attemptsTable(v: Speech, e: EventView): Html {
  if (e.attempts.length === 0) return html`<p class="empty">${v.t('dash.events.no_attempt')}</p>`;
  return html`<div class="table-wrap"><table class="attempts">
<caption class="sr-only">${v.t('dash.events.attempts_caption')}</caption>
<thead><tr><th scope="col">#</th><th scope="col">${v.t('dash.events.col_trigger')}</th><th scope="col">${v.t('dash.events.col_when')}</th><th scope="col">${v.t('dash.events.col_url')}</th><th scope="col">${v.t('dash.events.col_answer')}</th><th scope="col">${v.t('dash.events.col_time')}</th><th scope="col">${v.t('dash.events.col_result')}</th></tr></thead>
<tbody>
${e.attempts.map((a) => html`<tr data-attempt="${a.attempt}" data-trigger="${a.trigger}">
  <td class="num">${a.attempt}</td><td>${word(v, 'dash.events.trigger.', a.trigger)}</td><td>${when(v, a.attempted_at)}</td><td class="wrap">${a.url ?? '—'}</td>
  <td>${a.status_code !== null ? html`HTTP ${a.status_code}` : html`<span class="muted">${a.error ?? v.t('dash.events.no_answer')}</span>`}</td>
  <td class="num">${a.duration_ms} ms</td><td>${badge(v, a.succeeded ? 'delivered' : 'failed')}</td>
</tr>`)}
</tbody></table></div>`;
}

export function eventPage(v: View, e: EventView, o: { info?: string | undefined; error?: string | undefined; canRedeliver: boolean }): Html {
  return page(v, e.event, 'events', html`
${notice(o.info)}${notice(o.error, 'error')}
<dl class="facts">
<dt>${v.t('dash.events.event_id')}</dt><dd><code>${e.id}</code></dd>
<dt>${v.t('dash.events.resource')}</dt><dd>${word(v, 'dash.events.type.', e.data.type)} ${resourceLink(e.data.type, e.data.id)}</dd>
<dt>${v.t('dash.events.col_created')}</dt><dd>${when(v, e.created_at)}</dd>
<dt>${v.t('dash.events.delivery')}</dt><dd>${badge(v, e.delivery_status)}</dd>
<dt>${v.t('dash.events.next_attempt')}</dt><dd>${when(v, e.next_attempt_at)}</dd>
</dl>
${!allows(v.session.role, 'events:redeliver') ? '' : o.canRedeliver ? html`<form method="post" action="${BASE}/events/${e.id}/redeliver" class="inline">
  ${csrfField(v.session.csrfToken)}${nonceField()}
  <button type="submit">${v.t('dash.events.redeliver')}</button>
  <span class="help">${v.t('dash.events.redeliver_help')}</span>
</form>` : html`<p class="muted">${v.t('dash.events.redeliver_needs_url')}</p>`}
<h2>${v.t('dash.events.attempts')}</h2>
${attemptsTable(v, e)}
<h2>${v.t('dash.events.body')}</h2>
<pre class="code">${JSON.stringify({ id: e.id, event: e.event, created_at: e.created_at, data: e.data }, null, 2)}</pre>
<p><a href="${BASE}/events">${v.t('dash.back_to', { page: v.t('dash.events.title') })}</a></p>`);
}
