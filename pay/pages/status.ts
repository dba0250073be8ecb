// A payment's status for the payer (CONTRACT §16): pending says what to do on the handset for that
// operator; completed says it is paid; failed says why in plain words, with a fresh form to try again.
// Without JavaScript the page reloads itself until the payment is final; with it, the script asks the
// status URL and swaps the section in (its `data-poll` is the URL; none once final).
import { html, type Html } from '../../infra/html.ts';
import type { Speech } from '../language.ts';
import type { LinkPayin, PayableLink } from '../reads.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { operator } from '../../domain/catalogue.ts';
import { formatAmount } from '../../i18n/format.ts';
import { BASE, type View } from './layout.ts';
import { linkSummary } from './summary.ts';

export const isFinal = (p: LinkPayin) => p.status === 'completed' || p.status === 'failed';
export const paymentPath = (link: PayableLink, payinId: string) => `${BASE}/${link.id}/payments/${payinId}`;

function titleOf(p: LinkPayin): MessageKey {
  if (p.status === 'completed') return 'pay.status.completed.title';
  if (p.status === 'failed') return 'pay.status.failed.title';
  return 'pay.status.pending.title';
}

/** +237670000001 as a payer reads it: +237 6 70 00 00 01. */
const readablePhone = (e164: string) => parsePhoneNumberFromString(e164)?.formatInternational() ?? e164;

function body(sp: Speech, link: PayableLink, p: LinkPayin): Html {
  const amount = formatAmount(sp.lang, p.amount, p.currency);
  if (p.status === 'completed') return html`<p>${sp.t('pay.status.completed.text', { merchant: link.merchantName, amount })}</p>`;
  if (p.status === 'failed') {
    return html`<p>${sp.t('pay.status.failed.text', { amount })}</p>
<p>${sp.t(`pay.failure.${p.failureReason ?? 'provider_error'}`)}</p>
<p><a class="button" href="${BASE}/${link.id}">${sp.t('pay.status.retry')}</a></p>`;
  }
  const op = operator(p.operatorCode);
  return html`<p>${sp.t('pay.status.pending.lead', { amount, phone: readablePhone(p.phone), operator: op?.name ?? p.operatorCode })}</p>
<p class="handset">${op ? sp.t(`pay.handset.${op.code}` as MessageKey) : ''}</p>
<p class="muted"><span class="spinner" aria-hidden="true"></span>${sp.t('pay.status.pending.keep')}</p>`;
}

/** The status section's inner HTML and its title (also what the status URL answers the script). */
export function statusSection(sp: Speech, link: PayableLink, p: LinkPayin): { title: string; inner: Html } {
  const title = sp.t(titleOf(p));
  const inner = html`<h1>${title}</h1>
${body(sp, link, p)}
<p class="muted small">${sp.t('pay.status.reference', { reference: p.id })}</p>`;
  return { title, inner };
}

export function statusView(sp: Speech, link: PayableLink, p: LinkPayin): View {
  const { title, inner } = statusSection(sp, link, p);
  const poll = isFinal(p) ? '' : html` data-poll="${paymentPath(link, p.id)}/status"`;
  const main = html`<section id="status" class="status s-${p.status}" aria-live="polite"${poll}>
${inner}
</section>
${linkSummary(sp, link, false)}`;
  return { title, main, refresh: !isFinal(p), path: paymentPath(link, p.id) };
}
