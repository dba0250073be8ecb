// Payins, payouts and transfers: a list with filters (status, dates) and a search by id or external
// reference (a provider reference, or a value of your own `metadata` such as an order number). Each
// row names its customer and shows its metadata (the first entry, the rest a click away).
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import { KINDS, type Kind } from '../data.ts';
import { BASE, badge, money, notice, page, pager, when } from './layout.ts';

export interface ListForm { status?: string | undefined; from?: string | undefined; to?: string | undefined; q?: string | undefined }

const TITLES: Record<Kind, string> = { payins: 'Payins', payouts: 'Payouts', transfers: 'Transfers' };

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

function row(kind: Kind, r: Record<string, any>, names: Map<string, string>): Html {
  const amount = kind === 'transfers'
    ? html`${money(r.payin_amount, r.payin_currency)} → ${money(r.payout_amount, r.payout_currency)}`
    : html`${money(r.send_amount, r.send_currency)}`;
  const operator = kind === 'transfers' ? `${r.payer_operator_code} → ${r.recipient_operator_code}` : r.operator_code;
  return html`<tr data-id="${r.id}">
  <td><a href="${BASE}/${kind}/${r.id}"><code>${String(r.id).slice(0, 8)}</code><span class="sr-only"> ${r.id}</span></a></td>
  <td>${badge(r.status)}</td><td class="num">${amount}</td><td class="customer">${customer(r.customer_id, names.get(r.customer_id))}</td>
  <td>${operator}</td><td class="metadata">${metadata(r.metadata)}</td><td>${when(r.created_at)}</td>
</tr>`;
}

export function listPage(session: Session, kind: Kind, rows: Array<Record<string, any>>, nextCursor: string | null, f: ListForm,
  o: { names?: Map<string, string>; error?: string } = {}): Html {
  const names = o.names ?? new Map<string, string>();
  const statuses = KINDS[kind].statuses;
  return page(session, TITLES[kind], kind, html`
<form method="get" action="${BASE}/${kind}" class="filters" role="search" aria-label="Filter ${TITLES[kind].toLowerCase()}">
  <label for="f-q">Search</label>
  <input id="f-q" name="q" type="search" maxlength="200" value="${f.q ?? ''}" placeholder="id or reference" aria-describedby="q-help">
  <label for="f-status">Status</label>
  <select id="f-status" name="status"><option value="">any</option>
  ${statuses.map((s) => html`<option value="${s}"${f.status === s ? html` selected` : ''}>${s}</option>`)}</select>
  <label for="f-from">From</label><input id="f-from" name="from" type="date" value="${f.from ?? ''}">
  <label for="f-to">To</label><input id="f-to" name="to" type="date" value="${f.to ?? ''}">
  <button type="submit">Apply</button>
  <p id="q-help" class="help">Search by id, provider reference, or a value of your <code>metadata</code> (e.g. your order number).</p>
</form>
${notice(o.error, 'error')}
${rows.length === 0 ? html`<p class="empty">Nothing matches.</p>` : html`<div class="table-wrap"><table>
<caption class="sr-only">${TITLES[kind]}</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Customer</th><th scope="col">Operator</th><th scope="col">Metadata</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.map((r) => row(kind, r, names))}</tbody>
</table></div>`}
${pager(nextCursor, { q: f.q, status: f.status, from: f.from, to: f.to }, `${BASE}/${kind}`)}`);
}
