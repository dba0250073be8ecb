// A payin's refunds on its page (CONTRACT §9): each refund with its status, and, while something is
// left to refund on a completed payin, the form that refunds it in full (amount left empty) or in
// part. The form is confirmed first (a <dialog> with JavaScript, else a page of the server's own)
// and carries a one-time nonce, so a resent form refunds once.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import { BASE, badge, confirmForm, money, nonceField, when } from './layout.ts';

export const refundAction = (payinId: string) => `${BASE}/payins/${payinId}/refunds`;

/** What is left to refund: send_amount less every refund that has not failed. */
export function leftToRefund(payin: Record<string, any>, refunds: Array<Record<string, any>>): bigint {
  const taken = refunds.filter((r) => r.status !== 'failed').reduce((a, r) => a + BigInt(r.amount), 0n);
  return BigInt(payin.send_amount) - taken;
}

function refundForm(session: Session, payin: Record<string, any>, left: bigint): Html {
  const fields = html`${nonceField()}
  <label>Amount (${payin.send_currency}) <input name="amount" inputmode="numeric" pattern="[0-9]+" placeholder="${left.toString()}" aria-describedby="refund-help"></label>
  <label>Reason <input name="reason" maxlength="500"></label>
  <span id="refund-help" class="muted small">Leave the amount empty to refund all that is left (${money(left.toString(), payin.send_currency)}).</span>`;
  return confirmForm(refundAction(payin.id), session.csrfToken, 'Refund', `Refund this payin to ${payin.source?.phone ?? 'its payer'}? The amount leaves your available balance now.`, fields);
}

export function refundsSection(session: Session, payin: Record<string, any>, refunds: Array<Record<string, any>>): Html {
  const left = leftToRefund(payin, refunds);
  const rows = refunds.map((r) => html`<tr>
  <td><code>${r.id}</code></td><td>${badge(r.status)}</td><td class="num">${money(r.amount, r.currency)}</td>
  <td>${r.reason ?? html`<span class="muted">—</span>`}</td><td>${when(r.created_at)}</td>
</tr>`);
  return html`<section aria-labelledby="refunds-h"><h2 id="refunds-h">Refunds</h2>
<p>Refunded: <strong>${money(payin.refunded_amount ?? '0', payin.send_currency)}</strong></p>
${refunds.length === 0 ? html`<p class="muted">No refund yet.</p>` : html`<div class="table-wrap"><table class="refunds">
<caption class="sr-only">Refunds of this payin</caption>
<thead><tr><th scope="col">Refund</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Reason</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody></table></div>`}
${payin.status === 'completed' && left > 0n ? refundForm(session, payin, left) : ''}
</section>`;
}
