// The payment form (CONTRACT §16), GOV.UK's way: an error summary at the top linking to each field,
// each message beside its field, the page re-rendered with what was typed (never the code). It works
// without JavaScript; the script (static/pay.js) narrows the operators to the chosen country, shows
// the code field only for an operator that needs one, and suggests country and operator from the
// phone number with the prefix table the form carries (domain/mobile-prefixes.ts).
import { html, type Html } from '../../infra/html.ts';
import type { Speech } from '../language.ts';
import type { PayableLink } from '../reads.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { COUNTRIES, type CountryCode } from '../../domain/catalogue.ts';
import { MOBILE_PREFIXES } from '../../domain/mobile-prefixes.ts';
import { ATTEMPT_FIELD, countriesFor, operatorsOf, type FieldErrors, type FieldName, type FormInput } from '../form.ts';
import { BASE, type View } from './layout.ts';
import { amountOf, linkSummary } from './summary.ts';

export interface FormState {
  values: Partial<FormInput>;
  errors: FieldErrors;
  /** A problem of the whole form (expired, busy, operator closed), shown in the summary. */
  notice?: MessageKey;
  attemptId: string;
}

const LABELS: Record<FieldName, MessageKey> = {
  country_code: 'pay.field.country', operator_code: 'pay.field.operator', phone: 'pay.field.phone', name: 'pay.field.name', otp: 'pay.field.otp',
};
const HINTS: Partial<Record<FieldName, MessageKey>> = {
  operator_code: 'pay.field.operator_hint', phone: 'pay.field.phone_hint', otp: 'pay.field.otp_hint',
};

function errorSummary(sp: Speech, state: FormState): Html {
  const fields = (Object.keys(state.errors) as FieldName[]).filter((f) => state.errors[f]);
  if (fields.length === 0 && !state.notice) return html``;
  return html`<div class="error-summary" role="alert" tabindex="-1">
<h2>${sp.t('pay.errors.title')}</h2>
<ul>${state.notice ? html`<li>${sp.t(state.notice)}</li>` : ''}${fields.map((f) => html`<li><a href="#${f}">${sp.t(state.errors[f]!)}</a></li>`)}</ul>
</div>`;
}

/** A field's wrapper: label, hint, message, then the control (given its aria-describedby). */
function field(sp: Speech, state: FormState, name: FieldName, control: (describedBy: string) => Html, extra: Html = html``): Html {
  const hint = HINTS[name];
  const error = state.errors[name];
  const ids = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${error ? ' invalid' : ''}"${extra}>
<label for="${name}">${sp.t(LABELS[name])}</label>
${hint ? html`<p class="hint" id="${name}-hint">${sp.t(hint)}</p>` : ''}
${error ? html`<p class="error" id="${name}-error">${sp.t(error)}</p>` : ''}
${control(ids)}
</div>`;
}

const describedBy = (ids: string) => (ids ? html` aria-describedby="${ids}"` : '');
const invalid = (state: FormState, name: FieldName) => (state.errors[name] ? html` aria-invalid="true"` : '');
const selected = (yes: boolean) => (yes ? html` selected` : '');

function countrySelect(sp: Speech, state: FormState, countries: CountryCode[]): Html {
  const chosen = state.values.country_code ?? (countries.length === 1 ? countries[0] : '');
  return field(sp, state, 'country_code', (ids) => html`<select id="country_code" name="country_code" required${describedBy(ids)}${invalid(state, 'country_code')}>
<option value="">${sp.t('pay.field.choose')}</option>
${countries.map((c) => html`<option value="${c}"${selected(c === chosen)}>${sp.t(`country.${c}`)}</option>`)}
</select>`);
}

/** Operators grouped by country (the script disables the other countries' groups). */
function operatorSelect(sp: Speech, state: FormState, countries: CountryCode[]): Html {
  return field(sp, state, 'operator_code', (ids) => html`<select id="operator_code" name="operator_code" required${describedBy(ids)}${invalid(state, 'operator_code')}>
<option value="">${sp.t('pay.field.choose')}</option>
${countries.map((c) => html`<optgroup label="${sp.t(`country.${c}`)}" data-country="${c}">
${operatorsOf(c).map((o) => html`<option value="${o.code}"${o.requiresOtp ? html` data-otp="1"` : ''}${selected(o.code === state.values.operator_code)}>${o.name}</option>`)}
</optgroup>`)}
</select>`);
}

function textInput(name: FieldName, value: string | undefined, attrs: Html): (ids: string) => Html {
  return (ids) => html`<input id="${name}" name="${name}"${value ? html` value="${value}"` : ''}${attrs}${describedBy(ids)}>`;
}

/** The prefix table the script suggests from: calling codes and mobile prefixes of the link's countries. */
function prefixTable(countries: CountryCode[]): string {
  return JSON.stringify({
    dial: Object.fromEntries(countries.map((c) => [COUNTRIES[c].dialCode.slice(1), c])),
    ops: Object.fromEntries(countries.map((c) => [c, MOBILE_PREFIXES[c]])),
  });
}

export function formView(sp: Speech, link: PayableLink, state: FormState): View {
  const countries = countriesFor(link.currency);
  const otpPossible = countries.some((c) => operatorsOf(c).some((o) => o.requiresOtp));
  const err = (name: FieldName) => invalid(state, name);
  const main = html`${linkSummary(sp, link, true)}
<form method="post" action="${BASE}/${link.id}" class="pay" novalidate data-prefixes="${prefixTable(countries)}">
${errorSummary(sp, state)}
<h2>${sp.t('pay.form.heading')}</h2>
<input type="hidden" name="${ATTEMPT_FIELD}" value="${state.attemptId}">
${countrySelect(sp, state, countries)}
${field(sp, state, 'phone', textInput('phone', state.values.phone, html` type="tel" inputmode="tel" autocomplete="tel" required maxlength="30"${err('phone')}`))}
${operatorSelect(sp, state, countries)}
${link.hasCustomer ? '' : field(sp, state, 'name', textInput('name', state.values.name, html` type="text" autocomplete="name" required maxlength="100"${err('name')}`))}
${otpPossible ? field(sp, state, 'otp', textInput('otp', undefined, html` type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{4,8}" maxlength="8"${err('otp')}`), html` data-otp-field`) : ''}
<button type="submit">${sp.t('pay.submit', { amount: amountOf(sp, link) })}</button>
</form>`;
  return { title: sp.t('pay.title', { merchant: link.merchantName }), main, path: `${BASE}/${link.id}` };
}
