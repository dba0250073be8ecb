// The payer's form checked before anything is created (pay/form.ts): each bad field named with its
// message key, the countries of the link's currency only, the code only for an operator that needs
// one; every operator has its handset instructions; and the operator suggested from the number's
// prefix as the numbering plans say (domain/mobile-prefixes.ts).
import t from 'tap';
import { checkForm, countriesFor, readForm, validAttempt } from '../pay/form.ts';
import type { PayableLink } from '../pay/reads.ts';
import { OPERATORS } from '../domain/catalogue.ts';
import { suggestOperator } from '../domain/mobile-prefixes.ts';
import { catalogues } from '../i18n/catalogue.ts';

const link = (o: Partial<PayableLink> = {}): PayableLink => ({
  id: 'l', merchantId: 'm', merchantName: 'Boutique', amount: '5000', currency: 'XAF', description: 'x', hasCustomer: false, status: 'active', ...o,
});
const form = (o: Record<string, string> = {}) => readForm({
  attempt_id: '0b3c4f1e-8a2d-4c6b-9e1f-2a3b4c5d6e7f', country_code: 'CM', operator_code: 'CM_MTN_MOMO', phone: '6 70 00 00 01', name: 'Awa Ngono', ...o,
});

t.test('a right form: the command\'s fields, the phone in E.164, no code where none is needed', async (t) => {
  t.same(checkForm(link(), form({ otp: '1234' })), { fields: { countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '+237670000001', name: 'Awa Ngono', otp: undefined } });
  t.same(checkForm(link({ hasCustomer: true }), form({ name: '' })), { fields: { countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '+237670000001', name: undefined, otp: undefined } },
    'a link with its customer asks no name');
  const sn = checkForm(link({ currency: 'XOF' }), form({ country_code: 'SN', operator_code: 'SN_ORANGE_MOMO', phone: '+221 77 000 00 01', otp: ' 123456 ' }));
  t.match(sn, { fields: { phone: '+221770000001', otp: '123456' } });
});

t.test('each bad field with its message key', async (t) => {
  t.same(checkForm(link(), form({ country_code: 'SN' })), { errors: { country_code: 'pay.error.country', phone: 'pay.error.phone' } },
    'an XOF country for an XAF link (the phone cannot be read without a country)');
  t.same(checkForm(link(), form({ operator_code: 'CM_NOPE' })), { errors: { operator_code: 'pay.error.operator' } });
  t.same(checkForm(link({ currency: 'XOF' }), form({ country_code: 'SN', operator_code: 'CI_WAVE_MOMO', phone: '77 000 00 01' })), { errors: { operator_code: 'pay.error.operator' } },
    'an operator of another country');
  t.same(checkForm(link(), form({ phone: '+221 77 000 00 01' })), { errors: { phone: 'pay.error.phone' } }, 'a number of another country');
  t.same(checkForm(link(), form({ name: ' A ' })), { errors: { name: 'pay.error.name' } });
  t.same(checkForm(link(), form({ name: 'x'.repeat(101) })), { errors: { name: 'pay.error.name' } });
  const sn = { country_code: 'SN', operator_code: 'SN_ORANGE_MOMO', phone: '77 000 00 01' };
  t.same(checkForm(link({ currency: 'XOF' }), form(sn)), { errors: { otp: 'pay.error.otp' } }, 'Orange Money SN needs its code');
  t.same(checkForm(link({ currency: 'XOF' }), form({ ...sn, otp: '12a4' })), { errors: { otp: 'pay.error.otp' } });
});

t.test('posted values: strings only, bounded; the attempt id a UUID', async (t) => {
  t.same(readForm({ phone: ['1', '2'], name: 'x'.repeat(500) }).phone, '');
  t.equal(readForm({ name: 'x'.repeat(500) }).name.length, 200);
  t.ok(validAttempt('0b3c4f1e-8a2d-4c6b-9e1f-2a3b4c5d6e7f'));
  t.notOk(validAttempt('0b3c4f1e'));
  t.same(countriesFor('XAF'), ['CM']);
  t.same(countriesFor('XOF'), ['SN', 'BJ', 'TG', 'CI']);
});

t.test('every operator has its handset instructions in every language', async (t) => {
  for (const [lang, catalogue] of Object.entries(catalogues())) {
    for (const o of OPERATORS) t.ok(`pay.handset.${o.code}` in catalogue, `${lang}: ${o.code}`);
  }
});

t.test('the operator suggested from the national number\'s prefix', async (t) => {
  t.equal(suggestOperator('CM', '670000001'), 'CM_MTN_MOMO');
  t.equal(suggestOperator('CM', '655000001'), 'CM_ORANGE_MOMO', 'the longer prefix wins (65 is not all MTN)');
  t.equal(suggestOperator('CM', '650000001'), 'CM_MTN_MOMO');
  t.equal(suggestOperator('CM', '690000001'), 'CM_ORANGE_MOMO');
  t.equal(suggestOperator('SN', '760000001'), 'SN_FREE_MOMO');
  t.equal(suggestOperator('CI', '0707000001'), 'CI_ORANGE_MOMO');
  t.equal(suggestOperator('CI', '0505000001'), 'CI_MTN_MOMO');
  t.equal(suggestOperator('BJ', '0197000001'), 'BJ_MTN_MOMO', 'Benin\'s 10-digit plan');
  t.equal(suggestOperator('BJ', '95000001'), 'BJ_MOOV_MOMO', 'and its old 8-digit numbers');
  t.equal(suggestOperator('TG', '90000001'), 'TG_TOGOCOM_MOMO');
  t.equal(suggestOperator('TG', '99000001'), 'TG_MOOV_MOMO');
  t.equal(suggestOperator('SN', '700000001'), undefined, 'no mobile money listed for that range');
  t.equal(suggestOperator('CM', '6'), undefined, 'too short to say');
});
