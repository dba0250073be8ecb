// One payin, payout or transfer: the facts, the status timeline, the event history (every recorded
// event, secrets redacted), its webhook events, and for a transfer both legs.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import type { EventView } from '../../projections/webhook-events.ts';
import { KINDS, type Kind } from '../data.ts';
import { BASE, badge, money, notice, page, when } from './layout.ts';
import { eventsTable } from './events.ts';

function party(p: Record<string, any> | null | undefined): Html {
  if (!p) return html`<span class="muted">—</span>`;
  const name = [p.first_name, p.last_name, p.business_name].filter(Boolean).join(' ');
  return html`${name ? html`${name}, ` : ''}${p.phone ?? p.account_number ?? ''} (${p.operator_code ?? p.bank_name ?? p.rail_type}, ${p.country_code})`;
}

function timeline(history: Array<{ status: string; reason: string | null; created_at: string }>): Html {
  return html`<ol class="timeline">
${history.map((h) => html`<li>${badge(h.status)} ${when(h.created_at)}${h.reason ? html` <span class="muted">— ${h.reason}</span>` : ''}</li>`)}
</ol>`;
}

function leg(title: string, l: Record<string, any>): Html {
  return html`<div class="card leg">
  <h3>${title}</h3>
  <p>${badge(l.status)} <span class="big">${money(l.amount, l.currency)}</span></p>
  <dl class="facts small">
  <dt>Operator</dt><dd>${l.operator_code ?? '—'}</dd>
  <dt>Provider reference</dt><dd>${l.provider_reference ? html`<code>${l.provider_reference}</code>` : '—'}</dd>
  <dt>Started</dt><dd>${when(l.started_at)}</dd>
  <dt>${l.failed_at ? 'Failed' : 'Completed'}</dt><dd>${when(l.failed_at ?? l.completed_at)}${l.failure_reason ? html` — ${l.failure_reason}` : ''}</dd>
  </dl>
</div>`;
}

function historyTable(events: Array<Record<string, any>>): Html {
  return html`<div class="table-wrap"><table class="history">
<caption class="sr-only">Event history</caption>
<thead><tr><th scope="col">#</th><th scope="col">Event</th><th scope="col">When</th><th scope="col">By</th><th scope="col">Details</th></tr></thead>
<tbody>
${events.map((e) => html`<tr>
  <td class="num">${e.version}</td><td><code>${e.type}</code></td><td>${when(e.created_at)}</td>
  <td>${e.actor ?? '—'}${e.request_id ? html`<br><span class="muted small">request ${e.request_id}</span>` : ''}</td>
  <td><details><summary>data</summary><pre class="code">${JSON.stringify(e.data, null, 2)}</pre></details></td>
</tr>`)}
</tbody></table></div>`;
}

/** `refunds`: a payin's refunds section (pages/refunds.ts); `info`: a message after a redirect. */
export function detailPage(session: Session, kind: Kind, r: Record<string, any>, history: Array<Record<string, any>>, webhooks: EventView[], customerName?: string,
  more: { refunds?: Html | undefined; info?: string | undefined } = {}): Html {
  const k = KINDS[kind];
  const isTransfer = kind === 'transfers';
  const facts = isTransfer
    ? html`<dt>Collected</dt><dd>${money(r.payin_amount, r.payin_currency)} from ${party(r.payer)}</dd>
<dt>Paid out</dt><dd>${money(r.payout_amount, r.payout_currency)} to ${party(r.recipient)}</dd>
<dt>Fee</dt><dd>${money(r.total_fee, r.payin_currency)}</dd>
<dt>Corridor</dt><dd>${r.corridor_code}</dd>`
    : html`<dt>Amount</dt><dd>${money(r.send_amount, r.send_currency)} (receive ${money(r.receive_amount, r.receive_currency)}, fee ${money(r.total_fee, r.send_currency)})</dd>
<dt>${kind === 'payins' ? 'Payer' : 'Recipient'}</dt><dd>${party(kind === 'payins' ? r.source : r.recipient)}</dd>
<dt>Provider reference</dt><dd>${r.provider_reference ? html`<code>${r.provider_reference}</code>` : '—'}</dd>
${r.failure_reason ? html`<dt>Failure</dt><dd>${r.failure_reason}</dd>` : ''}`;
  const legs = isTransfer ? html`<section aria-labelledby="legs-h"><h2 id="legs-h">Legs</h2><div class="cards">
${leg('Collection (payin leg)', r.execution.collection)}
${(r.execution.disbursements as Array<Record<string, any>>).length === 0
    ? html`<div class="card leg"><h3>Disbursement (payout leg)</h3><p>${badge(r.payout_status)} <span class="muted">starts once the collection completes</span></p></div>`
    : (r.execution.disbursements as Array<Record<string, any>>).map((d) => leg(`Disbursement (payout leg)${d.attempt > 1 ? ` — attempt ${d.attempt}` : ''}`, d))}
</div></section>` : '';
  const meta = Object.entries((r.metadata ?? {}) as Record<string, string>);
  return page(session, `${k.singular} ${r.id}`, kind, html`${notice(more.info)}
<p>${badge(r.status)}${isTransfer ? html` collection ${badge(r.payin_status)} · disbursement ${badge(r.payout_status)}` : ''}</p>
<dl class="facts">
<dt>Id</dt><dd><code>${r.id}</code></dd>
${facts}
<dt>Customer</dt><dd>${customerName ? html`${customerName} ` : ''}<code>${r.customer_id}</code></dd>
<dt>Created</dt><dd>${when(r.created_at)}</dd>
<dt>Metadata</dt><dd>${meta.length > 0 ? meta.map(([mk, mv]) => html`<code>${mk}</code>=${String(mv)} `) : html`<span class="muted">none</span>`}</dd>
</dl>
${legs}
${more.refunds ?? ''}
<section aria-labelledby="tl-h"><h2 id="tl-h">Status timeline</h2>${timeline(r.history ?? [])}</section>
<section aria-labelledby="wh-h"><h2 id="wh-h">Webhook events</h2>${eventsTable(webhooks)}</section>
<section aria-labelledby="hist-h"><h2 id="hist-h">Event history</h2>${historyTable(history)}</section>
<p><a href="${BASE}/${kind}">← ${kind}</a></p>`);
}
