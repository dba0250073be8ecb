// Payins, payouts and transfers: a list with filters (status, dates) and a search by id or external
// reference (a provider reference, or a value of your own `metadata` such as an order number).
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import { KINDS, type Kind } from '../data.ts';
import { BASE, badge, money, notice, page, pager, when } from './layout.ts';

export interface ListForm { status?: string | undefined; from?: string | undefined; to?: string | undefined; q?: string | undefined }

const TITLES: Record<Kind, string> = { payins: 'Payins', payouts: 'Payouts', transfers: 'Transfers' };

function row(kind: Kind, r: Record<string, any>): Html {
  const amount = kind === 'transfers'
    ? html`${money(r.payin_amount, r.payin_currency)} → ${money(r.payout_amount, r.payout_currency)}`
    : html`${money(r.send_amount, r.send_currency)}`;
  const operator = kind === 'transfers' ? `${r.payer_operator_code} → ${r.recipient_operator_code}` : r.operator_code;
  return html`<tr>
  <td><a href="${BASE}/${kind}/${r.id}"><code>${String(r.id).slice(0, 8)}</code><span class="sr-only"> ${r.id}</span></a></td>
  <td>${badge(r.status)}</td><td class="num">${amount}</td><td>${operator}</td><td>${when(r.created_at)}</td>
</tr>`;
}

export function listPage(session: Session, kind: Kind, rows: Array<Record<string, any>>, nextCursor: string | null, f: ListForm, error?: string): Html {
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
${notice(error, 'error')}
${rows.length === 0 ? html`<p class="empty">Nothing matches.</p>` : html`<div class="table-wrap"><table>
<caption class="sr-only">${TITLES[kind]}</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Operator</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.map((r) => row(kind, r))}</tbody>
</table></div>`}
${pager(nextCursor, { q: f.q, status: f.status, from: f.from, to: f.to }, `${BASE}/${kind}`)}`);
}
