// What the page shows of a link, and nothing more (CONTRACT §16): the merchant's name, the link's
// description and its amount in the page's language.
import { html, type Html } from '../../infra/html.ts';
import type { Speech } from '../language.ts';
import type { PayableLink } from '../reads.ts';
import { formatAmount } from '../../i18n/format.ts';

export const amountOf = (sp: Speech, link: PayableLink) => formatAmount(sp.lang, link.amount, link.currency);

/** `heading`: the description is the page's <h1> (the form), or a line under another heading (the status). */
export function linkSummary(sp: Speech, link: PayableLink, heading: boolean): Html {
  return html`<section class="summary">
<p class="merchant">${sp.t('pay.merchant', { merchant: link.merchantName })}</p>
${heading ? html`<h1>${link.description}</h1>` : html`<p class="description">${link.description}</p>`}
<p class="amount"><span class="sr-only">${sp.t('pay.amount')}: </span>${amountOf(sp, link)}</p>
</section>`;
}
