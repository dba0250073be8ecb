// The page shell: a skip link, a header with the merchant's name and sign-out, a navigation bar
// (the current page marked with aria-current), one <main>. Plus the small formatting helpers pages share.
import { html, type Html } from '../html.ts';
import { CSRF_FIELD } from '../csrf.ts';
import { NONCE_FIELD, newNonce } from '../form-once.ts';
import type { Session } from '../session.ts';

export const BASE = '/dashboard';

const NAV = [
  { href: `${BASE}`, label: 'Home', key: 'home' },
  { href: `${BASE}/payins`, label: 'Payins', key: 'payins' },
  { href: `${BASE}/payouts`, label: 'Payouts', key: 'payouts' },
  { href: `${BASE}/transfers`, label: 'Transfers', key: 'transfers' },
  { href: `${BASE}/webhooks`, label: 'Webhooks', key: 'webhooks' },
  { href: `${BASE}/events`, label: 'Event log', key: 'events' },
  { href: `${BASE}/keys`, label: 'API keys', key: 'keys' },
];

function head(title: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Merchant dashboard</title>
<link rel="icon" href="${BASE}/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${BASE}/static/dashboard.css">
<script src="${BASE}/static/dashboard.js" defer></script>
</head>`;
}

/** A page for a signed-in user. */
export function page(session: Session, title: string, active: string, body: Html): Html {
  return html`${head(title)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">${session.merchantName || 'Merchant'} <span class="muted">dashboard</span></span>
  <form method="post" action="${BASE}/sign-out" class="signout">
    ${csrfField(session.csrfToken)}
    <span class="muted who">${session.email}</span>
    <button type="submit" class="link">Sign out</button>
  </form>
</header>
<nav aria-label="Main"><ul>
${NAV.map((n) => html`<li><a href="${n.href}"${n.key === active ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
</ul></nav>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A page before sign-in (sign-in, set password, errors). */
export function publicPage(title: string, body: Html): Html {
  return html`${head(title)}
<body class="public">
<a class="skip" href="#main">Skip to content</a>
<main id="main" tabindex="-1" class="narrow">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

export const csrfField = (token: string) => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;

/** A fresh one-time nonce for a form whose effect must not repeat (see form-once.ts); `nonce` carries one over (confirm page). */
export const nonceField = (nonce: string = newNonce()) => html`<input type="hidden" name="${NONCE_FIELD}" value="${nonce}">`;

export function notice(text: string | undefined, kind: 'ok' | 'error' = 'ok'): Html {
  if (!text) return html``;
  return kind === 'error'
    ? html`<div class="notice error" role="alert">${text}</div>`
    : html`<div class="notice ok" role="status">${text}</div>`;
}

/** A whole-franc amount with thin-space thousands ("1 250 000 XOF"); amounts are decimal strings, never floats. */
export function money(amount: unknown, currency?: unknown): string {
  const s = typeof amount === 'string' ? amount : String(amount ?? '');
  const negative = s.startsWith('-');
  const digits = negative ? s.slice(1) : s;
  const grouped = /^[0-9]+$/.test(digits) ? digits.replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f') : digits;
  return `${negative ? '−' : ''}${grouped}${currency ? ` ${String(currency)}` : ''}`;
}

export function when(iso: unknown): Html {
  if (typeof iso !== 'string' || iso === '') return html`<span class="muted">—</span>`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 19).replace('T', ' ')} UTC</time>`;
}

export function badge(status: unknown): Html {
  const s = String(status ?? '');
  return html`<span class="badge ${`s-${s.replace(/[^a-z_]/g, '')}`}">${s.replace(/_/g, ' ')}</span>`;
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
export function revealOnce(title: string, id: string, warning: string, items: RevealItem[]): Html {
  return html`<section class="reveal" aria-labelledby="${id}-label">
  <h2 id="${id}-label">${title}</h2>
  <p class="warning"><strong>Copy it now: it is shown only once.</strong> ${warning}</p>
  <dl class="revealed">
  ${items.map((it) => html`<dt>${it.label}</dt>
  <dd class="secret-row">
    <code id="${it.id}" class="secret" tabindex="0">${it.value}</code>
    <button type="button" class="copy" data-copy="${it.id}" hidden>Copy</button>
  </dd>`)}
  </dl>
</section>`;
}

export function pager(nextCursor: string | null, params: Record<string, string | undefined>, path: string): Html {
  if (!nextCursor) return html``;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  q.set('cursor', nextCursor);
  return html`<p class="pager"><a href="${path}?${q.toString()}" rel="next">Older →</a></p>`;
}
