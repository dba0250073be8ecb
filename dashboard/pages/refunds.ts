// A payin's refunds on its page (CONTRACT §9): each refund with its status, and, while something is
// left to refund on a completed payin, the form that refunds it in full (amount left empty) or in
// part. The form is confirmed first (a <dialog> with JavaScript, else a page of the server's own)
// and carries a one-time nonce, so a resent form refunds once.
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import { BASE, badge, confirmForm, money, nonceField, rich, when } from './layout.ts';

export const refundAction = (payinId: string) => `${BASE}/payins/${payinId}/refunds`;

/** What is left to refund: send_amount less every refund that has not failed. */
export function leftToRefund(payin: Record<string, any>, refunds: Array<Record<string, any>>): bigint {
  const taken = refunds.filter((r) => r.status !== 'failed').reduce((a, r) => a + BigInt(r.amount), 0n);
  return BigInt(payin.send_amount) - taken;
}

function refundForm(v: View, payin: Record<string, any>, left: bigint): Html {
  const fields = html`${nonceField()}
  <label>${v.t('dash.refunds.amount', { currency: payin.send_currency })} <input name="amount" inputmode="numeric" pattern="[0-9]+" placeholder="${left.toString()}" aria-describedby="refund-help"></label>
  <label>${v.t('dash.refunds.reason')} <input name="reason" maxlength="500"></label>
  <span id="refund-help" class="muted small">${v.t('dash.refunds.help', { amount: money(v, left.toString(), payin.send_currency) })}</span>`;
  return confirmForm(refundAction(payin.id), v.session.csrfToken, v.t('dash.refunds.button'),
    v.t('dash.refunds.question', { payer: payin.source?.phone ?? v.t('dash.refunds.its_payer') }), fields);
}

export function refundsSection(v: View, payin: Record<string, any>, refunds: Array<Record<string, any>>): Html {
  const left = leftToRefund(payin, refunds);
  const rows = refunds.map((r) => html`<tr>
  <td><code>${r.id}</code></td><td>${badge(v, r.status)}</td><td class="num">${money(v, r.amount, r.currency)}</td>
  <td>${r.reason ?? html`<span class="muted">—</span>`}</td><td>${when(v, r.created_at)}</td>
</tr>`);
  return html`<section aria-labelledby="refunds-h"><h2 id="refunds-h">${v.t('dash.refunds.title')}</h2>
<p>${rich(v, 'dash.refunds.refunded', { amount: html`<strong>${money(v, payin.refunded_amount ?? '0', payin.send_currency)}</strong>` })}</p>
${refunds.length === 0 ? html`<p class="muted">${v.t('dash.refunds.none')}</p>` : html`<div class="table-wrap"><table class="refunds">
<caption class="sr-only">${v.t('dash.refunds.caption')}</caption>
<thead><tr><th scope="col">${v.t('dash.refunds.col_refund')}</th><th scope="col">${v.t('dash.col.status')}</th><th scope="col">${v.t('dash.col.amount')}</th><th scope="col">${v.t('dash.refunds.col_reason')}</th><th scope="col">${v.t('dash.col.created')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`}
${payin.status === 'completed' && left > 0n && allows(v.session.role, 'refunds:create') ? refundForm(v, payin, left) : ''}
</section>`;
}
