// The confirmation step for a browser without JavaScript: the server asks on a page of its own and
// the form there carries `confirmed=yes` (with JavaScript a <dialog> asks and adds it).
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import { csrfField, page } from './layout.ts';

export function confirmPage(v: View, o: { title: string; question: string; action: string; button: string; fields: Record<string, string>; back: string }): Html {
  return page(v, o.title, '', html`
<p>${o.question}</p>
<form method="post" action="${o.action}" class="row">
  ${csrfField(v.session.csrfToken)}
  ${Object.entries(o.fields).map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`)}
  <input type="hidden" name="confirmed" value="yes">
  <button type="submit" class="danger">${o.button}</button>
  <a href="${o.back}">${v.t('dash.cancel')}</a>
</form>`);
}
