// The page shell of every payer's page: the page's language on <html>, the one stylesheet and the one
// script of the page's own origin (no inline script or style: the CSP forbids both), one <main>, and a
// link to the page in the other language. A page is a View: its title and its <main>, which the
// script also receives as JSON to show without a reload.
import { html, type Html } from '../../infra/html.ts';
import type { Speech } from '../language.ts';
import { LANGUAGES } from '../../i18n/languages.ts';

export const BASE = '/pay';
export const STATIC = `${BASE}/static`;
/** How often a status page without JavaScript reloads itself until the payment is final. */
const REFRESH_SECONDS = 3;

export interface View {
  title: string;
  main: Html;
  /** The page reloads itself (no JavaScript) until what it shows is final. */
  refresh?: boolean;
  /** The page's path, for the link to the same page in the other language. */
  path: string;
}

function languageSwitch(sp: Speech, path: string): Html {
  const other = LANGUAGES.find((l) => l !== sp.lang)!;
  // The link's text ('language.switch') is the other language's name in that language.
  return html`<a href="${path}?lang=${other}" hreflang="${other}" lang="${other}">${sp.t('language.switch')}</a>`;
}

export function document(sp: Speech, view: View): Html {
  return html`<!doctype html>
<html lang="${sp.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${view.title}</title>
<link rel="icon" href="${STATIC}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${STATIC}/pay.css">
<script src="${STATIC}/pay.js" defer></script>
${view.refresh ? html`<noscript><meta http-equiv="refresh" content="${REFRESH_SECONDS}"></noscript>` : ''}
</head>
<body>
<main id="content">
${view.main}
</main>
<footer><span class="sr-only">${sp.t('language.label')}: </span>${languageSwitch(sp, view.path)}</footer>
</body>
</html>`;
}

/** A page that says one thing (not found, closed, refused, too many attempts, an error). */
export function messageView(title: string, text: string, path: string): View {
  return { title, path, main: html`<h1>${title}</h1>\n<p>${text}</p>` };
}
