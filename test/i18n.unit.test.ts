// The catalogues and the language choice (i18n/, issue 42): French unless asked otherwise, the
// strongest hint first; every language has every key with the same placeholders; amounts in each
// language's own format.
import t from 'tap';
import { fromAcceptLanguage, negotiateLanguage } from '../i18n/languages.ts';
import { catalogues, fill, translator } from '../i18n/catalogue.ts';
import { formatAmount } from '../i18n/format.ts';

t.test('the language: ?lang=, then the remembered choice, then Accept-Language, then French', async (t) => {
  t.equal(negotiateLanguage({}), 'fr');
  t.equal(negotiateLanguage({ acceptLanguage: 'en-US,en;q=0.9' }), 'en');
  t.equal(negotiateLanguage({ acceptLanguage: 'en;q=0.5, fr-SN;q=0.8' }), 'fr', 'the higher q wins');
  t.equal(negotiateLanguage({ acceptLanguage: 'de-DE, es' }), 'fr', 'none of ours: French');
  t.equal(negotiateLanguage({ acceptLanguage: 'en;q=0' }), 'fr', 'q=0 means not acceptable');
  t.equal(negotiateLanguage({ cookie: 'en', acceptLanguage: 'fr' }), 'en', 'the remembered choice beats the browser');
  t.equal(negotiateLanguage({ query: 'fr', cookie: 'en' }), 'fr', 'an explicit ?lang= beats everything');
  t.equal(negotiateLanguage({ query: 'xx', cookie: 'nope', acceptLanguage: 'en' }), 'en', 'unknown values are ignored');
  t.equal(negotiateLanguage({ query: ['en'] }), 'fr', 'a repeated ?lang= is not a language');
  t.equal(fromAcceptLanguage('x'.repeat(10_000) + ',en'), undefined, 'a huge header is read only so far');
});

t.test('every language has every key, non-empty, with the same placeholders', async (t) => {
  const all = catalogues();
  const placeholders = (m: string) => [...m.matchAll(/\{([a-z_]+)\}/g)].map((x) => x[1]).sort();
  const keys = Object.keys(all.en);
  t.ok(keys.length > 0);
  for (const [lang, catalogue] of Object.entries(all)) {
    t.same(Object.keys(catalogue).sort(), [...keys].sort(), `${lang} has exactly the English keys`);
    for (const key of keys) {
      const message = catalogue[key as keyof typeof catalogue];
      if (message.trim() === '') t.fail(`${lang} ${key} is empty`);
      if (placeholders(message).join() !== placeholders(all.en[key as keyof typeof all.en]).join()) t.fail(`${lang} ${key}: placeholders differ from English`);
    }
  }
});

t.test('placeholders are filled; an unknown one stays visible', async (t) => {
  t.equal(fill('Pay {amount} to {merchant}', { amount: '5 000 F CFA', merchant: 'Boutique' }), 'Pay 5 000 F CFA to Boutique');
  t.equal(fill('Hello {name}', {}), 'Hello {name}');
  t.equal(translator('fr')('status.completed'), 'Réussi');
  t.equal(translator('en')('status.completed'), 'Completed');
});

t.test('amounts in each language, exact beyond a float', async (t) => {
  // Intl separates with no-break spaces (U+00A0, U+202F), which keep an amount on one line.
  const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');
  t.equal(plain(formatAmount('fr', '5000', 'XOF')), '5 000 F CFA');
  t.equal(plain(formatAmount('en', '5000', 'XAF')), 'FCFA 5,000');
  t.equal(plain(formatAmount('en', '9007199254740993', 'XOF')), 'F CFA 9,007,199,254,740,993');
});
