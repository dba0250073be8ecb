// Sign-in and set-password (invitation) pages, and the plain message pages shown before sign-in.
import { html, type Html } from '../../infra/html.ts';
import { MIN_PASSWORD_CHARS } from '../../infra/passwords.ts';
import type { Speech } from '../language.ts';
import { BASE, csrfField, notice, publicPage, rich } from './layout.ts';

export function signInPage(v: Speech, csrf: string, o: { error?: string | undefined; info?: string | undefined; email?: string | undefined } = {}): Html {
  return publicPage(v, v.t('dash.signin.title'), html`
${notice(o.info)}${notice(o.error, 'error')}
<form method="post" action="${BASE}/sign-in" class="stack">
  ${csrfField(csrf)}
  <label for="email">${v.t('dash.signin.email')}</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${o.email ?? ''}" autofocus>
  <label for="password">${v.t('dash.signin.password')}</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
  <button type="submit">${v.t('dash.signin.submit')}</button>
</form>
<p class="muted">${v.t('dash.signin.no_account')}</p>`);
}

export function setPasswordPage(v: Speech, csrf: string, token: string, email: string, error?: string): Html {
  return publicPage(v, v.t('dash.password.title'), html`
<p>${rich(v, 'dash.password.welcome', { email: html`<strong>${email}</strong>` })}</p>
${notice(error, 'error')}
<form method="post" action="${BASE}/invite" class="stack">
  ${csrfField(csrf)}
  <input type="hidden" name="token" value="${token}">
  <input type="text" name="username" value="${email}" autocomplete="username" hidden readonly>
  <label for="password">${v.t('dash.password.new')}</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_CHARS}" maxlength="200" aria-describedby="pw-help">
  <p id="pw-help" class="help">${v.t('dash.password.help', { min: MIN_PASSWORD_CHARS })}</p>
  <label for="password_confirm">${v.t('dash.password.repeat')}</label>
  <input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_CHARS}" maxlength="200">
  <button type="submit">${v.t('dash.password.submit')}</button>
</form>`);
}

export function messagePage(v: Speech, title: string, text: string, link?: { href: string; label: string }): Html {
  return publicPage(v, title, html`<p>${text}</p>${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}`);
}
