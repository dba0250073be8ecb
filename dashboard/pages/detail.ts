// One payin, payout or transfer: the facts, the status timeline, the event history (every recorded
// event, secrets redacted), its webhook events, and for a transfer both legs.
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import type { Speech } from '../language.ts';
import type { EventView } from '../../projections/webhook-events.ts';
import type { Kind } from '../data.ts';
import { BASE, badge, money, notice, page, rich, when } from './layout.ts';
import { eventsTable } from './events.ts';
import { TITLES } from './money.ts';

const TITLE = { payins: 'dash.detail.payin', payouts: 'dash.detail.payout', transfers: 'dash.detail.transfer' } as const;

function party(p: Record<string, any> | null | undefined): Html {
  if (!p) return html`<span class="muted">—</span>`;
  const name = [p.first_name, p.last_name, p.business_name].filter(Boolean).join(' ');
  return html`${name ? html`${name}, ` : ''}${p.phone ?? p.account_number ?? ''} (${p.operator_code ?? p.bank_name ?? p.rail_type}, ${p.country_code})`;
}

function timeline(v: Speech, history: Array<{ status: string; reason: string | null; created_at: string }>): Html {
  return html`<ol class="timeline">
${history.map((h) => html`<li>${badge(v, h.status)} ${when(v, h.created_at)}${h.reason ? html` <span class="muted">— ${h.reason}</span>` : ''}</li>`)}
</ol>`;
}

function leg(v: Speech, title: string, l: Record<string, any>): Html {
  return html`<div class="card leg">
  <h3>${title}</h3>
  <p>${badge(v, l.status)} <span class="big">${money(v, l.amount, l.currency)}</span></p>
  <dl class="facts small">
  <dt>${v.t('dash.detail.operator')}</dt><dd>${l.operator_code ?? '—'}</dd>
  <dt>${v.t('dash.detail.provider_reference')}</dt><dd>${l.provider_reference ? html`<code>${l.provider_reference}</code>` : '—'}</dd>
  <dt>${v.t('dash.detail.started')}</dt><dd>${when(v, l.started_at)}</dd>
  <dt>${v.t(l.failed_at ? 'dash.detail.failed' : 'dash.detail.completed')}</dt><dd>${when(v, l.failed_at ?? l.completed_at)}${l.failure_reason ? html` — ${l.failure_reason}` : ''}</dd>
  </dl>
</div>`;
}

function historyTable(v: Speech, events: Array<Record<string, any>>): Html {
  return html`<div class="table-wrap"><table class="history">
<caption class="sr-only">${v.t('dash.detail.history')}</caption>
<thead><tr><th scope="col">#</th><th scope="col">${v.t('dash.detail.history_event')}</th><th scope="col">${v.t('dash.detail.history_when')}</th><th scope="col">${v.t('dash.detail.history_by')}</th><th scope="col">${v.t('dash.detail.history_details')}</th></tr></thead>
<tbody>
${events.map((e) => html`<tr>
  <td class="num">${e.version}</td><td><code>${e.type}</code></td><td>${when(v, e.created_at)}</td>
  <td>${e.actor ?? '—'}${e.request_id ? html`<br><span class="muted small">${v.t('dash.detail.request', { id: e.request_id })}</span>` : ''}</td>
  <td><details><summary>${v.t('dash.detail.history_data')}</summary><pre class="code">${JSON.stringify(e.data, null, 2)}</pre></details></td>
</tr>`)}
</tbody></table></div>`;
}

function transferFacts(v: Speech, r: Record<string, any>): Html {
  return html`<dt>${v.t('dash.detail.collected')}</dt><dd>${rich(v, 'dash.detail.collected_value', { amount: money(v, r.payin_amount, r.payin_currency), party: party(r.payer) })}</dd>
<dt>${v.t('dash.detail.paid_out')}</dt><dd>${rich(v, 'dash.detail.paid_out_value', { amount: money(v, r.payout_amount, r.payout_currency), party: party(r.recipient) })}</dd>
<dt>${v.t('dash.detail.fee')}</dt><dd>${money(v, r.total_fee, r.payin_currency)}</dd>
<dt>${v.t('dash.detail.corridor')}</dt><dd>${r.corridor_code}</dd>`;
}

function paymentFacts(v: Speech, kind: Kind, r: Record<string, any>): Html {
  const amount = v.t('dash.detail.amount_value', { send: money(v, r.send_amount, r.send_currency), receive: money(v, r.receive_amount, r.receive_currency), fee: money(v, r.total_fee, r.send_currency) });
  return html`<dt>${v.t('dash.detail.amount')}</dt><dd>${amount}</dd>
<dt>${v.t(kind === 'payins' ? 'dash.detail.payer' : 'dash.detail.recipient')}</dt><dd>${party(kind === 'payins' ? r.source : r.recipient)}</dd>
<dt>${v.t('dash.detail.provider_reference')}</dt><dd>${r.provider_reference ? html`<code>${r.provider_reference}</code>` : '—'}</dd>
${r.payment_link_id ? html`<dt>${v.t('dash.detail.payment_link')}</dt><dd><a href="${BASE}/links/${r.payment_link_id}"><code>${r.payment_link_id}</code></a></dd>` : ''}
${r.failure_reason ? html`<dt>${v.t('dash.detail.failure')}</dt><dd>${r.failure_reason}</dd>` : ''}`;
}

function legs(v: Speech, r: Record<string, any>): Html {
  const disbursements = r.execution.disbursements as Array<Record<string, any>>;
  return html`<section aria-labelledby="legs-h"><h2 id="legs-h">${v.t('dash.detail.legs')}</h2><div class="cards">
${leg(v, v.t('dash.detail.collection_leg'), r.execution.collection)}
${disbursements.length === 0
    ? html`<div class="card leg"><h3>${v.t('dash.detail.disbursement_leg')}</h3><p>${badge(v, r.payout_status)} <span class="muted">${v.t('dash.detail.disbursement_waits')}</span></p></div>`
    : disbursements.map((d) => leg(v, d.attempt > 1 ? v.t('dash.detail.disbursement_attempt', { attempt: d.attempt }) : v.t('dash.detail.disbursement_leg'), d))}
</div></section>`;
}

/** `refunds`: a payin's refunds section (pages/refunds.ts); `info`: a message after a redirect. */
export function detailPage(v: View, kind: Kind, r: Record<string, any>, history: Array<Record<string, any>>, webhooks: EventView[], customerName?: string,
  more: { refunds?: Html | undefined; info?: string | undefined } = {}): Html {
  const isTransfer = kind === 'transfers';
  const meta = Object.entries((r.metadata ?? {}) as Record<string, string>);
  return page(v, v.t(TITLE[kind], { id: r.id }), kind, html`${notice(more.info)}
<p>${badge(v, r.status)}${isTransfer ? html` ${rich(v, 'dash.detail.collection_status', { status: badge(v, r.payin_status), payout_status: badge(v, r.payout_status) })}` : ''}</p>
<dl class="facts">
<dt>${v.t('dash.detail.id')}</dt><dd><code>${r.id}</code></dd>
${isTransfer ? transferFacts(v, r) : paymentFacts(v, kind, r)}
<dt>${v.t('dash.detail.customer')}</dt><dd>${customerName ? html`${customerName} ` : ''}<code>${r.customer_id}</code></dd>
<dt>${v.t('dash.detail.created')}</dt><dd>${when(v, r.created_at)}</dd>
<dt>${v.t('dash.detail.metadata')}</dt><dd>${meta.length > 0 ? meta.map(([mk, mv]) => html`<code>${mk}</code>=${String(mv)} `) : html`<span class="muted">${v.t('dash.none')}</span>`}</dd>
</dl>
${isTransfer ? legs(v, r) : ''}
${more.refunds ?? ''}
<section aria-labelledby="tl-h"><h2 id="tl-h">${v.t('dash.detail.timeline')}</h2>${timeline(v, r.history ?? [])}</section>
${allows(v.session.role, 'events:read') ? html`<section aria-labelledby="wh-h"><h2 id="wh-h">${v.t('dash.detail.webhook_events')}</h2>${eventsTable(v, webhooks)}</section>` : ''}
<section aria-labelledby="hist-h"><h2 id="hist-h">${v.t('dash.detail.history')}</h2>${historyTable(v, history)}</section>
<p><a href="${BASE}/${kind}">${v.t('dash.back_to', { page: v.t(TITLES[kind]) })}</a></p>`);
}
