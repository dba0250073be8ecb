// normalisePhone (domain/phone.ts): E.164 for the five covered countries, national forms
// normalised, wrong country refused, both Benin numberings accepted.
import t, { type Test } from 'tap';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { normalisePhone } from '../domain/phone.ts';
import { DomainError } from '../domain/errors.ts';
import type { CountryCode } from '../domain/catalogue.ts';

function refusal(t: Test, raw: string, country: CountryCode | undefined, field = 'phone'): DomainError | undefined {
  try {
    const got = normalisePhone(raw, country, field);
    t.fail(`expected ${raw} (${country ?? 'no country'}) to be refused, got ${got}`);
    return undefined;
  } catch (err) {
    t.ok(err instanceof DomainError, `${raw}: a DomainError`);
    const e = err as DomainError;
    t.equal(e.code, 'bad_request', `${raw}: bad_request`);
    t.same(e.details?.map((d) => d.field), [field], `${raw}: the detail names ${field}`);
    return e;
  }
}

const byCountry: Array<{ country: CountryCode; national: string; e164: string; spaced: string }> = [
  { country: 'CM', national: '677123456', e164: '+237677123456', spaced: '+237 6 77 12 34 56' },
  { country: 'SN', national: '771234567', e164: '+221771234567', spaced: '+221 77 123 45 67' },
  { country: 'BJ', national: '0197123456', e164: '+2290197123456', spaced: '+229 01 97 12 34 56' },
  { country: 'TG', national: '90123456', e164: '+22890123456', spaced: '+228 90-12-34-56' },
  { country: 'CI', national: '0707123456', e164: '+2250707123456', spaced: '+225 07 07 12 34 56' },
];

t.test('each country: national form, E.164 form and a formatted E.164 form give the same E.164', async (t) => {
  for (const c of byCountry) {
    t.equal(normalisePhone(c.national, c.country), c.e164, `${c.country} national`);
    t.equal(normalisePhone(c.e164, c.country), c.e164, `${c.country} E.164 with its country`);
    t.equal(normalisePhone(c.spaced, c.country), c.e164, `${c.country} E.164 with separators`);
    t.equal(normalisePhone(c.e164, undefined), c.e164, `${c.country} E.164 without a country`);
    t.equal(normalisePhone(`  ${c.e164}  `, c.country), c.e164, `${c.country} surrounding spaces`);
  }
});

t.test('an E.164 number must belong to the given country', async (t) => {
  for (const c of byCountry) {
    for (const other of byCountry.filter((o) => o.country !== c.country)) {
      const e = refusal(t, other.e164, c.country);
      t.match(e?.message, new RegExp(`expected a ${c.country} number`), `${other.e164} is not a ${c.country} number`);
    }
  }
});

t.test('only the five covered countries', async (t) => {
  refusal(t, '+33612345678', undefined);
  refusal(t, '+33612345678', 'CM');
  refusal(t, '+2348031234567', undefined); // Nigeria
});

t.test('a national form needs a country', async (t) => {
  refusal(t, '677123456', undefined);
});

t.test('wrong lengths and garbage are refused', async (t) => {
  refusal(t, '+23767712345', 'CM'); // one digit short
  refusal(t, '+2376771234567', 'CM'); // one digit long
  refusal(t, '67712345', 'CM');
  refusal(t, '+22507123456', 'CI'); // the 8-digit plan Cote d'Ivoire left in 2021
  refusal(t, 'not a phone', 'CM');
  refusal(t, 'tel:+237677123456', 'CM');
  refusal(t, '+237677123456 ext 5', 'CM');
  refusal(t, '', 'CM');
  refusal(t, '+', 'CM');
  refusal(t, '+237 677 123 456 7890 1234 5678 9012 3456', 'CM');
});

t.test('the detail names the field the caller gives (rail parties reuse it)', async (t) => {
  refusal(t, '+221771234567', 'CM', 'payer.phone');
});

t.test('Benin: the 10-digit 01 numbering (since November 2024)', async (t) => {
  t.equal(normalisePhone('0197123456', 'BJ'), '+2290197123456');
  t.equal(normalisePhone('+2290197123456', 'BJ'), '+2290197123456');
  t.equal(normalisePhone('01 66 12 34 56', 'BJ'), '+2290166123456');
  t.equal(normalisePhone('+229 01 21 30 12 34', undefined), '+2290121301234', 'a fixed line');
  refusal(t, '0297123456', 'BJ'); // not a number of the new plan
});

t.test('Benin: the older 8-digit numbering is accepted and kept as sent', async (t) => {
  // The library knows only the new plan: what the explicit handling in phone.ts exists for.
  t.notOk(parsePhoneNumberFromString('+22997123456')?.isValid(), 'libphonenumber-js alone refuses the 8-digit form');
  t.equal(normalisePhone('97123456', 'BJ'), '+22997123456', 'national 8-digit form');
  t.equal(normalisePhone('+22997123456', 'BJ'), '+22997123456', 'E.164 8-digit form');
  t.equal(normalisePhone('+229 66 12 34 56', undefined), '+22966123456', 'E.164 8-digit form without a country');
  t.equal(normalisePhone('97 12 34 99', 'BJ'), '+22997123499', 'the last digits (the sandbox outcome) are kept');
  refusal(t, '+22997123456', 'TG');
  refusal(t, '9712345', 'BJ'); // 7 digits
  refusal(t, '971234567', 'BJ'); // 9 digits
});
