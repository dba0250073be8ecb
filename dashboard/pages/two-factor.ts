// The two-step sign-in page (/dashboard/two-factor): enrolment (QR code, the key as text, a first code
// to confirm), the recovery codes shown once, turning it off, and the owner's rule for the whole team.
import { html, type Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { TwoFactorState } from '../../commands/dashboard-two-factor.ts';
import { BASE, csrfField, notice, page, rich, when } from './layout.ts';

export interface Enrolment {
  /** The base32 key, to type by hand. */
  secret: string;
  /** The otpauth:// URI drawn as an SVG QR code. */
  qrSvg: string;
}

export interface TwoFactorPage {
  state: TwoFactorState;
  isOwner: boolean;
  enrolment?: Enrolment | undefined;
  info?: string | undefined;
  error?: string | undefined;
}

/** The key in groups of four, as authenticator apps show theirs (spaces are ignored when typed). */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

/** The one-code field both forms use: digits on a phone's keypad, filled by a password manager's OTP. */
const codeField = (id: string, label: string) => html`<label for="${id}">${label}</label>
  <input id="${id}" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="40" size="12">`;

function enrolForm(v: View, e: Enrolment): Html {
  const qr = `data:image/svg+xml;base64,${Buffer.from(e.qrSvg).toString('base64')}`;
  return html`<p>${v.t('tfa.enrol.scan')}</p>
<p><img class="qr" src="${qr}" alt="${v.t('tfa.enrol.qr_alt')}" width="220" height="220"></p>
<p>${v.t('tfa.enrol.manual')}</p>
<p><code id="totp-secret" class="secret" data-secret="${e.secret}">${grouped(e.secret)}</code></p>
<form method="post" action="${BASE}/two-factor/enrol" class="stack">
  ${csrfField(v.session.csrfToken)}
  <p>${v.t('tfa.enrol.confirm')}</p>
  ${codeField('enrol-code', v.t('tfa.code.label'))}
  <button type="submit">${v.t('tfa.enrol.submit')}</button>
</form>`;
}

function enrolledPart(v: View, state: TwoFactorState): Html {
  const off = state.required
    ? html`<p class="muted">${v.t('tfa.disable.required')}</p>`
    : html`<form method="post" action="${BASE}/two-factor/disable" class="stack">
  ${csrfField(v.session.csrfToken)}
  ${codeField('disable-code', v.t('tfa.disable.label'))}
  <button type="submit" class="danger">${v.t('tfa.disable.submit')}</button>
</form>`;
  return html`<p id="two-factor-status">${rich(v, 'tfa.status.on', { when: when(v, state.enrolledAt) })}</p>
<p>${v.t('tfa.status.codes_left', { count: state.recoveryCodesLeft })}</p>
<h2>${v.t('tfa.disable.heading')}</h2>
${off}`;
}

/** The owner's switch; shown to the owner only, and only once the owner uses 2FA (so the owner is never locked out by it). */
function requirePart(v: View, p: TwoFactorPage): Html {
  if (!p.isOwner) return html``;
  const { required, enrolled } = p.state;
  const button = !enrolled && !required ? html`<p class="muted">${v.t('tfa.require.enrol_first')}</p>`
    : html`<form method="post" action="${BASE}/two-factor/require" class="inline">
  ${csrfField(v.session.csrfToken)}
  <input type="hidden" name="required" value="${required ? 'false' : 'true'}">
  <button type="submit">${v.t(required ? 'tfa.require.disable' : 'tfa.require.enable')}</button>
</form>`;
  return html`<section aria-labelledby="require-heading">
<h2 id="require-heading">${v.t('tfa.require.heading')}</h2>
<p id="require-state">${v.t(required ? 'tfa.require.on' : 'tfa.require.off')}</p>
${button}
</section>`;
}

export function twoFactorPage(v: View, p: TwoFactorPage): Html {
  const mustEnrol = p.state.required && !p.state.enrolled;
  return page(v, v.t('tfa.title'), 'two-factor', html`
${notice(p.info)}${notice(p.error, 'error')}${mustEnrol ? notice(v.t('tfa.required_notice'), 'error') : ''}
<p>${v.t('tfa.explain')}</p>
${p.state.enrolled ? enrolledPart(v, p.state) : p.enrolment ? enrolForm(v, p.enrolment) : ''}
${requirePart(v, p)}`);
}

/** Right after enrolment: the ten recovery codes, this once. */
export function recoveryCodesPage(v: View, codes: string[]): Html {
  return page(v, v.t('tfa.enrolled.title'), 'two-factor', html`
<section class="reveal" aria-labelledby="recovery-heading">
  <h2 id="recovery-heading">${v.t('tfa.recovery.heading')}</h2>
  <p class="warning"><strong>${v.t('dash.reveal.warning')}</strong> ${v.t('tfa.recovery.warning')}</p>
  <ol id="recovery-codes" class="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
</section>
<p><a href="${BASE}">${v.t('tfa.recovery.continue')}</a></p>`);
}
