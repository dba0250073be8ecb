// Payment links (CONTRACT §16): the list with the form that creates one, and one link's page with
// the address to share (copyable), its QR code (the payer's page module serves it, public, at
// qr_svg_url) to print or share, its payins, and deactivation (confirmed, once per form).
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import type { Speech } from '../language.ts';
import { LINK_CURRENCIES, type LinkForm } from '../payment-links.ts';
import { BASE, badge, confirmForm, csrfField, money, nonceField, notice, page, pager, when } from './layout.ts';
import { paymentColumns, paymentRows } from './money.ts';

const LINK_WORDS = 'dash.links.status.';
export const linkPath = (id: string) => `${BASE}/links/${id}`;

function paymentsCount(v: Speech, l: Record<string, any>): string {
  return l.max_payments === null
    ? v.t('dash.links.payments_unlimited', { count: l.payments_count })
    : v.t('dash.links.payments_of', { count: l.payments_count, max: l.max_payments });
}

function createForm(v: View, f: LinkForm): Html {
  return html`<section aria-labelledby="new-link-h">
<h2 id="new-link-h">${v.t('dash.links.new')}</h2>
<form method="post" action="${BASE}/links" class="stack">
  ${csrfField(v.session.csrfToken)}${nonceField()}
  <label for="link-amount">${v.t('dash.links.amount')}</label>
  <input id="link-amount" name="amount" inputmode="numeric" pattern="[0-9]+" required maxlength="12" value="${f.amount}">
  <label for="link-currency">${v.t('dash.links.currency')}</label>
  <select id="link-currency" name="currency">${LINK_CURRENCIES.map((c) => html`<option${f.currency === c ? html` selected` : ''}>${c}</option>`)}</select>
  <label for="link-description">${v.t('dash.links.description')}</label>
  <input id="link-description" name="description" required maxlength="500" value="${f.description}" aria-describedby="link-description-help">
  <p id="link-description-help" class="help">${v.t('dash.links.description_help')}</p>
  <label for="link-expires">${v.t('dash.links.expires')}</label>
  <input id="link-expires" name="expires" type="date" value="${f.expires}" aria-describedby="link-expires-help">
  <p id="link-expires-help" class="help">${v.t('dash.links.expires_help')}</p>
  <label for="link-max">${v.t('dash.links.max_payments')}</label>
  <input id="link-max" name="max_payments" inputmode="numeric" pattern="[0-9]*" maxlength="7" value="${f.maxPayments}" aria-describedby="link-max-help">
  <p id="link-max-help" class="help">${v.t('dash.links.max_payments_help')}</p>
  <button type="submit">${v.t('dash.links.create')}</button>
</form>
</section>`;
}

function linksTable(v: Speech, links: Array<Record<string, any>>): Html {
  if (links.length === 0) return html`<p class="empty">${v.t('dash.links.none')}</p>`;
  return html`<div class="table-wrap"><table class="links">
<caption class="sr-only">${v.t('dash.links.caption')}</caption>
<thead><tr><th scope="col">${v.t('dash.links.col_link')}</th><th scope="col">${v.t('dash.col.status')}</th><th scope="col" class="num">${v.t('dash.col.amount')}</th><th scope="col">${v.t('dash.links.col_description')}</th><th scope="col">${v.t('dash.links.col_payments')}</th><th scope="col">${v.t('dash.col.created')}</th></tr></thead>
<tbody>${links.map((l) => html`<tr data-link-id="${l.id}" data-status="${l.status}">
  <td><a href="${linkPath(l.id)}"><code>${String(l.id).slice(0, 8)}</code><span class="sr-only"> ${l.id}</span></a></td>
  <td>${badge(v, l.status, LINK_WORDS)}</td><td class="num">${money(v, l.amount, l.currency)}</td><td>${l.description}</td>
  <td class="num">${paymentsCount(v, l)}</td><td>${when(v, l.created_at)}</td>
</tr>`)}</tbody>
</table></div>`;
}

const EMPTY_LINK_FORM: LinkForm = { amount: '', currency: 'XAF', description: '', expires: '', maxPayments: '1' };

export function linksPage(v: View, links: Array<Record<string, any>>, nextCursor: string | null,
  o: { form?: LinkForm | undefined; error?: string | undefined } = {}): Html {
  return page(v, v.t('dash.links.title'), 'links', html`
${notice(o.error, 'error')}
<p>${v.t('dash.links.intro')}</p>
${allows(v.session.role, 'payment_links:manage') ? createForm(v, o.form ?? EMPTY_LINK_FORM) : ''}
<section aria-labelledby="links-h">
<h2 id="links-h">${v.t('dash.links.caption')}</h2>
${linksTable(v, links)}
${pager(v, nextCursor, {}, `${BASE}/links`)}
</section>`);
}

/** The address to share, copyable, and the QR code of it (an image of the payer's page module, same origin or PUBLIC_BASE_URL's). */
function share(v: Speech, l: Record<string, any>): Html {
  return html`<section aria-labelledby="share-h" class="share">
<h2 id="share-h">${v.t('dash.links.url')}</h2>
<p class="secret-row"><code id="link-url" class="secret" tabindex="0">${l.url}</code>
<button type="button" class="copy" data-copy="link-url" hidden>${v.t('dash.copy')}</button></p>
<p class="help">${v.t('dash.links.url_help')} <a href="${l.url}" target="_blank" rel="noopener">${v.t('dash.links.page')}</a></p>
<h2>${v.t('dash.links.qr')}</h2>
<p><img class="qr" src="${l.qr_svg_url}" width="200" height="200" alt="${v.t('dash.links.qr_alt', { url: l.url })}"></p>
<p><a href="${l.qr_svg_url}" download="payment-link-${l.id}.svg">${v.t('dash.links.qr_download')}</a> ·
<a href="${l.qr_svg_url}" target="_blank" rel="noopener">${v.t('dash.links.qr_open')}</a></p>
</section>`;
}

export function linkPage(v: View, l: Record<string, any>, payins: Array<Record<string, any>>, names: Map<string, string>, info?: string): Html {
  const deactivate = l.status === 'active' && allows(v.session.role, 'payment_links:manage')
    ? confirmForm(`${linkPath(l.id)}/deactivate`, v.session.csrfToken, v.t('dash.links.deactivate'), v.t('dash.links.deactivate_question'), nonceField())
    : '';
  return page(v, v.t('dash.links.link_title', { id: l.id }), 'links', html`${notice(info)}
<p>${badge(v, l.status, LINK_WORDS)} <span class="big">${money(v, l.amount, l.currency)}</span></p>
<dl class="facts">
<dt>${v.t('dash.links.description')}</dt><dd>${l.description}</dd>
<dt>${v.t('dash.links.col_payments')}</dt><dd>${paymentsCount(v, l)}</dd>
<dt>${v.t('dash.links.expires_at')}</dt><dd>${l.expires_at ? when(v, l.expires_at) : v.t('dash.never')}</dd>
<dt>${v.t('dash.links.customer')}</dt><dd>${l.customer_id ? html`<code>${l.customer_id}</code>` : v.t('dash.links.any_customer')}</dd>
<dt>${v.t('dash.col.created')}</dt><dd>${when(v, l.created_at)}</dd>
</dl>
${deactivate}
${share(v, l)}
<section aria-labelledby="link-payins-h">
<h2 id="link-payins-h">${v.t('dash.links.payins')}</h2>
${payins.length === 0 ? html`<p class="empty">${v.t('dash.links.no_payins')}</p>` : html`<div class="table-wrap"><table class="link-payins">
<caption class="sr-only">${v.t('dash.links.payins')}</caption>
<thead><tr>${paymentColumns(v)}</tr></thead>
<tbody>${paymentRows(v, 'payins', payins, names)}</tbody>
</table></div>`}
</section>
<p><a href="${BASE}/links">${v.t('dash.back_to', { page: v.t('dash.links.all') })}</a></p>`);
}
