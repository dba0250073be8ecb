// The sign-in step after the password, for a member with two-step sign-in: one field for the 6-digit
// code or a recovery code. A public page (no session yet): the pre-session CSRF token protects it.
import { html, type Html } from '../../infra/html.ts';
import type { Speech } from '../language.ts';
import { BASE, csrfField, notice, publicPage } from './layout.ts';

export function codePage(v: Speech, csrf: string, error?: string): Html {
  return publicPage(v, v.t('tfa.code.title'), html`
${notice(error, 'error')}
<p>${v.t('tfa.code.intro')}</p>
<form method="post" action="${BASE}/sign-in/code" class="stack">
  ${csrfField(csrf)}
  <label for="code">${v.t('tfa.code.label')}</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="40" size="12" aria-describedby="code-help" autofocus>
  <p id="code-help" class="help">${v.t('tfa.code.hint')}</p>
  <button type="submit">${v.t('tfa.code.submit')}</button>
</form>`);
}
