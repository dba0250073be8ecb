// The confirmation step for a browser without JavaScript: the server asks on a page of its own and
// the form there carries `confirmed=yes` (with JavaScript a <dialog> asks and adds it).
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import { csrfField, page } from './layout.ts';

export function confirmPage(session: Session, o: { title: string; question: string; action: string; button: string; fields: Record<string, string>; back: string }): Html {
  return page(session, o.title, '', html`
<p>${o.question}</p>
<form method="post" action="${o.action}" class="row">
  ${csrfField(session.csrfToken)}
  ${Object.entries(o.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
  <input type="hidden" name="confirmed" value="yes">
  <button type="submit" class="danger">${o.button}</button>
  <a href="${o.back}">Cancel</a>
</form>`);
}
