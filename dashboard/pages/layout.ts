// The page shell: a skip link, a header with the merchant's name, the language switch and sign-out,
// a navigation bar (the current page marked with aria-current), one <main>. Every word comes from the
// catalogue in the page's language (i18n/, dashboard/language.ts). Plus the small formatting helpers
// pages share: amounts and dates in that language (i18n/format.ts), statuses, confirmations.
import { html, template, type Html } from '../../infra/html.ts';
import { CSRF_FIELD } from '../csrf.ts';
import { NONCE_FIELD, newNonce } from '../form-once.ts';
import type { Speech } from '../language.ts';
import type { View } from '../http.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { keyFor } from '../words.ts';
import { formatAmount, formatDateTime } from '../../i18n/format.ts';
import { allows, type Permission } from '../../domain/dashboard-roles.ts';

export const BASE = '/dashboard';

/** `need`: the permission the page's route names (routes/*.ts): a link the member's role may not open is not shown. */
const NAV: Array<{ path: string; label: MessageKey; key: string; need: Permission }> = [
  { path: '', label: 'dash.nav.home', key: 'home', need: 'home:read' },
  { path: '/payins', label: 'dash.nav.payins', key: 'payins', need: 'money:read' },
  { path: '/payouts', label: 'dash.nav.payouts', key: 'payouts', need: 'money:read' },
  { path: '/transfers', label: 'dash.nav.transfers', key: 'transfers', need: 'money:read' },
  { path: '/links', label: 'dash.nav.links', key: 'links', need: 'payment_links:read' },
  { path: '/webhooks', label: 'dash.nav.webhooks', key: 'webhooks', need: 'webhooks:read' },
  { path: '/events', label: 'dash.nav.events', key: 'events', need: 'events:read' },
  { path: '/keys', label: 'dash.nav.keys', key: 'keys', need: 'keys:read' },
  { path: '/team', label: 'team.nav', key: 'team', need: 'team:read' },
  { path: '/audit-log', label: 'audit.nav', key: 'audit', need: 'audit:read' },
];

/** A catalogue sentence with markup in its places (html.ts template). */
export const rich = (v: Speech, key: MessageKey, values: Parameters<typeof template>[1]): Html => template(v.t(key), values);

function head(v: Speech, title: string): Html {
  return html`<!doctype html>
<html lang="${v.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${v.t('dash.document_title', { title })}</title>
<link rel="icon" href="${BASE}/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${BASE}/static/dashboard.css">
<script src="${BASE}/static/dashboard.js" defer></script>
</head>`;
}

/** The words the script (static/dashboard.js) shows, in the page's language. */
const scriptLabels = (v: Speech) =>
  html` data-label-copy="${v.t('dash.copy')}" data-label-copied="${v.t('dash.copied')}" data-label-cancel="${v.t('dash.cancel')}" data-label-confirm="${v.t('dash.confirm')}"`;

/** The switch to the other language: a plain link that also remembers the choice (language.ts). */
function languageSwitch(v: Speech, cls: string): Html {
  return html`<a class="${cls}" href="${v.other.href}" hreflang="${v.other.lang}" lang="${v.other.lang}"><span class="sr-only" lang="${v.lang}">${v.t('language.label')} </span>${v.t('language.switch')}</a>`;
}

/** A page for a signed-in user. */
export function page(v: View, title: string, active: string, body: Html): Html {
  const { session } = v;
  return html`${head(v, title)}
<body${scriptLabels(v)}>
<a class="skip" href="#main">${v.t('dash.skip')}</a>
<header class="top">
  <span class="brand">${session.merchantName || v.t('dash.brand.merchant')} <span class="muted">${v.t('dash.brand.dashboard')}</span></span>
  <form method="post" action="${BASE}/sign-out" class="signout">
    ${csrfField(session.csrfToken)}
    ${languageSwitch(v, 'link lang')}
    <span class="muted who">${session.email}</span>
    <a class="link" href="${BASE}/sessions">${v.t('team.sessions.nav')}</a>
    <a class="link" href="${BASE}/two-factor">${v.t('tfa.title')}</a>
    <button type="submit" class="link">${v.t('dash.sign_out')}</button>
  </form>
</header>
<nav aria-label="${v.t('dash.nav.label')}"><ul>
${NAV.filter((n) => allows(session.role, n.need)).map((n) => html`<li><a href="${BASE}${n.path}"${n.key === active ? html` aria-current="page"` : ''}>${v.t(n.label)}</a></li>`)}
</ul></nav>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A page before sign-in (sign-in, set password, errors). */
export function publicPage(v: Speech, title: string, body: Html): Html {
  return html`${head(v, title)}
<body class="public"${scriptLabels(v)}>
<a class="skip" href="#main">${v.t('dash.skip')}</a>
<main id="main" tabindex="-1" class="narrow">
<p class="lang-switch">${languageSwitch(v, 'lang')}</p>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

export const csrfField = (token: string) => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;

/** A fresh one-time nonce for a form whose effect must not repeat (see form-once.ts); `nonce` carries one over (confirm page). */
export const nonceField = (nonce: string = newNonce()) => html`<input type="hidden" name="${NONCE_FIELD}" value="${nonce}">`;

export function notice(text: string | Html | undefined, kind: 'ok' | 'error' = 'ok'): Html {
  if (!text) return html``;
  return kind === 'error'
    ? html`<div class="notice error" role="alert">${text}</div>`
    : html`<div class="notice ok" role="status">${text}</div>`;
}

/** A whole-franc amount in the page's language ("5 000 F CFA", "FCFA 5,000"); amounts are decimal strings, never floats. */
export function money(v: Speech, amount: unknown, currency?: unknown): string {
  const s = typeof amount === 'string' ? amount : String(amount ?? '');
  // Anything not a whole amount in a currency code is shown as it is (never guessed at).
  if (!/^-?[0-9]+$/.test(s) || typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return `${s}${currency ? ` ${String(currency)}` : ''}`;
  return formatAmount(v.lang, s, currency);
}

export function when(v: Speech, iso: unknown): Html {
  if (typeof iso !== 'string' || iso === '') return html`<span class="muted">—</span>`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  return html`<time datetime="${d.toISOString()}">${formatDateTime(v.lang, d.toISOString())}</time>`;
}

/** A status in words (the value itself, underscores as spaces, when the catalogue does not name it). */
/** `words`: where the catalogue names these statuses (a payment link's have their own words). */
export function statusLabel(v: Speech, status: string, words = 'dash.status.'): string {
  const key = keyFor(words, status);
  return key ? v.t(key) : status.replace(/_/g, ' ');
}

export function badge(v: Speech, status: unknown, words?: string): Html {
  const s = String(status ?? '');
  return html`<span class="badge ${`s-${s.replace(/[^a-z_]/g, '')}`}" data-status="${s}">${statusLabel(v, s, words)}</span>`;
}

/** A POST form whose action needs confirming: a <dialog> with JS, else the server asks on a page of its own. */
export function confirmForm(action: string, csrf: string, button: string, question: string, extra: Html = html``, danger = true): Html {
  return html`<form method="post" action="${action}" class="inline" data-confirm="${question}">
  ${csrfField(csrf)}${extra}
  <button type="submit"${danger ? html` class="danger"` : ''}>${button}</button>
</form>`;
}

/** One value in a reveal box: its label (the header it goes in, for a credential) and the value, copyable. */
export interface RevealItem { id: string; label: Html; value: string }

/** Values shown once (a new secret, with what goes beside it), each with a copy button, and the warning. */
export function revealOnce(v: Speech, title: string, id: string, warning: string | Html, items: RevealItem[]): Html {
  return html`<section class="reveal" aria-labelledby="${id}-label">
  <h2 id="${id}-label">${title}</h2>
  <p class="warning"><strong>${v.t('dash.reveal.warning')}</strong> ${warning}</p>
  <dl class="revealed">
  ${items.map((it) => html`<dt>${it.label}</dt>
  <dd class="secret-row">
    <code id="${it.id}" class="secret" tabindex="0">${it.value}</code>
    <button type="button" class="copy" data-copy="${it.id}" hidden>${v.t('dash.copy')}</button>
  </dd>`)}
  </dl>
</section>`;
}

export function pager(v: Speech, nextCursor: string | null, params: Record<string, string | undefined>, path: string): Html {
  if (!nextCursor) return html``;
  const q = new URLSearchParams();
  for (const [k, val] of Object.entries(params)) if (val) q.set(k, val);
  q.set('cursor', nextCursor);
  return html`<p class="pager"><a href="${path}?${q.toString()}" rel="next">${v.t('dash.pager.older')}</a></p>`;
}
