// Sign-in and set-password (invitation) pages, and the plain message pages shown before sign-in.
import { html, type Html } from '../html.ts';
import { MIN_PASSWORD_CHARS } from '../../infra/passwords.ts';
import { BASE, csrfField, notice, publicPage } from './layout.ts';

export function signInPage(csrf: string, o: { error?: string | undefined; info?: string | undefined; email?: string | undefined } = {}): Html {
  return publicPage('Sign in', html`
${notice(o.info)}${notice(o.error, 'error')}
<form method="post" action="${BASE}/sign-in" class="stack">
  ${csrfField(csrf)}
  <label for="email">E-mail address</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${o.email ?? ''}" autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
  <button type="submit">Sign in</button>
</form>
<p class="muted">No account yet, or forgot your password? Your payments operator sends you a link to set one.</p>`);
}

export function setPasswordPage(csrf: string, token: string, email: string, error?: string): Html {
  return publicPage('Choose your password', html`
<p>Welcome. You are setting the password for <strong>${email}</strong>. You will then sign in with it.</p>
${notice(error, 'error')}
<form method="post" action="${BASE}/invite" class="stack">
  ${csrfField(csrf)}
  <input type="hidden" name="token" value="${token}">
  <input type="text" name="username" value="${email}" autocomplete="username" hidden readonly>
  <label for="password">New password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_CHARS}" maxlength="200" aria-describedby="pw-help">
  <p id="pw-help" class="help">At least ${MIN_PASSWORD_CHARS} characters. A long phrase is easiest to remember.</p>
  <label for="password_confirm">Repeat the password</label>
  <input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_CHARS}" maxlength="200">
  <button type="submit">Set password</button>
</form>`);
}

export function messagePage(title: string, text: string, link?: { href: string; label: string }): Html {
  return publicPage(title, html`<p>${text}</p>${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}`);
}
