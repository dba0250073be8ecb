// Payins, payouts and transfers: a list with filters (status, dates) and a search by id or external
// reference (a provider reference, or a value of your own `metadata` such as an order number). Each
// row names its customer and shows its metadata (the first entry, the rest a click away).
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { Speech } from '../language.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { KINDS, type Kind } from '../data.ts';
import { BASE, badge, money, notice, page, pager, rich, statusLabel, when } from './layout.ts';

export interface ListForm { status?: string | undefined; from?: string | undefined; to?: string | undefined; q?: string | undefined }

export const TITLES: Record<Kind, MessageKey> = { payins: 'dash.nav.payins', payouts: 'dash.nav.payouts', transfers: 'dash.nav.transfers' };

function customer(id: unknown, name: string | undefined): Html {
  if (typeof id !== 'string') return html`<span class="muted">—</span>`;
  const short = html`<code>${id.slice(0, 8)}</code><span class="sr-only"> ${id}</span>`;
  return name ? html`${name}<br><span class="muted small">${short}</span>` : short;
}

/** The merchant's own metadata: the first entry in view, every entry in an expandable cell. */
function metadata(md: unknown): Html {
  const entries = Object.entries(md && typeof md === 'object' ? (md as Record<string, unknown>) : {});
  if (entries.length === 0) return html`<span class="muted">—</span>`;
  const [[k0, v0]] = entries as [[string, unknown]];
  return html`<details class="meta"><summary><code>${k0}</code>=${String(v0)}${entries.length > 1 ? html` <span class="muted">+${entries.length - 1}</span>` : ''}</summary>
  <dl class="facts small">${entries.map(([k, v]) => html`<dt><code>${k}</code></dt><dd>${String(v)}</dd>`)}</dl></details>`;
}

function row(v: Speech, kind: Kind, r: Record<string, any>, names: Map<string, string>): Html {
  const amount = kind === 'transfers'
    ? html`${money(v, r.payin_amount, r.payin_currency)} → ${money(v, r.payout_amount, r.payout_currency)}`
    : html`${money(v, r.send_amount, r.send_currency)}`;
  const operator = kind === 'transfers' ? `${r.payer_operator_code} → ${r.recipient_operator_code}` : r.operator_code;
  return html`<tr data-id="${r.id}">
  <td><a href="${BASE}/${kind}/${r.id}"><code>${String(r.id).slice(0, 8)}</code><span class="sr-only"> ${r.id}</span></a></td>
  <td>${badge(v, r.status)}</td><td class="num">${amount}</td><td class="customer">${customer(r.customer_id, names.get(r.customer_id))}</td>
  <td>${operator}</td><td class="metadata">${metadata(r.metadata)}</td><td>${when(v, r.created_at)}</td>
</tr>`;
}

/** The table's column headers (also the payment links page's payins). */
export const paymentColumns = (v: Speech) => html`<th scope="col">${v.t('dash.col.id')}</th><th scope="col">${v.t('dash.col.status')}</th><th scope="col" class="num">${v.t('dash.col.amount')}</th><th scope="col">${v.t('dash.col.customer')}</th><th scope="col">${v.t('dash.col.operator')}</th><th scope="col">${v.t('dash.col.metadata')}</th><th scope="col">${v.t('dash.col.created')}</th>`;

/** Rows of payins (or payouts, transfers) as the lists show them. */
export const paymentRows = (v: Speech, kind: Kind, rows: Array<Record<string, any>>, names: Map<string, string>) => rows.map((r) => row(v, kind, r, names));

function filters(v: Speech, kind: Kind, f: ListForm): Html {
  const statuses = KINDS[kind].statuses;
  return html`<form method="get" action="${BASE}/${kind}" class="filters" role="search" aria-label="${v.t('dash.list.filter', { what: v.t(TITLES[kind]).toLowerCase() })}">
  <label for="f-q">${v.t('dash.list.search')}</label>
  <input id="f-q" name="q" type="search" maxlength="200" value="${f.q ?? ''}" placeholder="${v.t('dash.list.search_placeholder')}" aria-describedby="q-help">
  <label for="f-status">${v.t('dash.list.status')}</label>
  <select id="f-status" name="status"><option value="">${v.t('dash.any')}</option>
  ${statuses.map((s) => html`<option value="${s}"${f.status === s ? html` selected` : ''}>${statusLabel(v, s)}</option>`)}</select>
  <label for="f-from">${v.t('dash.list.from')}</label><input id="f-from" name="from" type="date" value="${f.from ?? ''}">
  <label for="f-to">${v.t('dash.list.to')}</label><input id="f-to" name="to" type="date" value="${f.to ?? ''}">
  <button type="submit">${v.t('dash.list.apply')}</button>
  <p id="q-help" class="help">${rich(v, 'dash.list.search_help', { metadata: html`<code>metadata</code>` })}</p>
</form>`;
}

export function listPage(v: View, kind: Kind, rows: Array<Record<string, any>>, nextCursor: string | null, f: ListForm,
  o: { names?: Map<string, string>; error?: string } = {}): Html {
  const names = o.names ?? new Map<string, string>();
  return page(v, v.t(TITLES[kind]), kind, html`
${filters(v, kind, f)}
${notice(o.error, 'error')}
${rows.length === 0 ? html`<p class="empty">${v.t('dash.list.empty')}</p>` : html`<div class="table-wrap"><table>
<caption class="sr-only">${v.t(TITLES[kind])}</caption>
<thead><tr>${paymentColumns(v)}</tr></thead>
<tbody>${paymentRows(v, kind, rows, names)}</tbody>
</table></div>`}
${pager(v, nextCursor, { q: f.q, status: f.status, from: f.from, to: f.to }, `${BASE}/${kind}`)}`);
}
