// The dashboard's language (issue 42): French unless the user asks otherwise; English from the
// browser's Accept-Language or from the switch in the header, which is remembered (the `lang`
// cookie) across requests and sign-ins; every page, refusal and script label in that language,
// amounts and dates formatted for it.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { FormClient, signedInClient } from './helpers/dashboard.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const m = await h.newMerchant('Boutique Awa');

const htmlLang = (text: string) => /<html lang="([a-z]+)">/.exec(text)?.[1];
const h1 = (text: string) => /<h1>([^<]*)<\/h1>/.exec(text)?.[1];
/** The header's switch: its address and its words. */
const switchOf = (text: string) => /<a class="[^"]*lang[^"]*" href="([^"]+)" hreflang="([a-z]+)"[^>]*>[\s\S]*?<\/span>([^<]+)<\/a>/.exec(text);

t.test('before sign-in: French by default, English for an English browser', async (t) => {
  const fr = await new FormClient(h.url, null).get('/dashboard/sign-in');
  t.equal(htmlLang(fr.text), 'fr');
  t.equal(h1(fr.text), 'Connexion');
  t.match(fr.text, /<title>Connexion · Espace marchand<\/title>/);
  t.match(fr.text, /<label for="password">Mot de passe<\/label>/);
  t.match(fr.text, /<button type="submit">Se connecter<\/button>/);
  t.equal(switchOf(fr.text)?.[3], 'English', 'the switch offers English');
  t.equal(switchOf(fr.text)?.[1], '/dashboard/sign-in?lang=en');

  const en = await new FormClient(h.url, null).get('/dashboard/sign-in', { 'accept-language': 'en-GB,en;q=0.9,fr;q=0.5' });
  t.equal(htmlLang(en.text), 'en');
  t.equal(h1(en.text), 'Sign in');
  t.equal(switchOf(en.text)?.[3], 'Français');
  t.equal(en.setCookies.filter((c) => c.startsWith('lang=')).length, 0, 'the browser\'s language is not a choice to remember');

  const badLink = await new FormClient(h.url, null).get(`/dashboard/invite?token=${'x'.repeat(43)}`);
  t.equal(badLink.status, 404);
  t.match(badLink.text, /<h1>Lien non valide<\/h1>[\s\S]*Demandez-en un nouveau à votre opérateur de paiement\./);
});

t.test('signed in: French pages, amounts and script labels; the switch is remembered across requests', async (t) => {
  const c = await signedInClient(h, m.merchantId, 'awa@example.com', undefined, null);
  const home = await c.get('/dashboard');
  t.equal(home.status, 200);
  t.equal(htmlLang(home.text), 'fr');
  t.equal(h1(home.text), 'Accueil');
  for (const word of ['Encaissements', 'Décaissements', 'Transferts', 'Liens de paiement', 'Journal des événements', 'Clés API', 'Se déconnecter', 'Premiers pas']) {
    t.ok(home.text.includes(word), `the home page says ${word}`);
  }
  t.match(home.text, /<p class="big">0\sF\sCFA<\/p>/, 'amounts in the French way');
  t.match(home.text, /data-label-copy="Copier" data-label-copied="Copié" data-label-cancel="Annuler" data-label-confirm="Confirmer"/);
  t.notOk(/>(Home|Payins|Sign out|Getting started)</.test(home.text), 'no English left in the shell');
  const missing = await c.get('/dashboard/no-such-page');
  t.equal(missing.status, 404);
  t.match(missing.text, /<h1>Introuvable<\/h1>[\s\S]*Cette page n’existe pas\./);

  // The switch: a link to this very page (its query kept) with ?lang=en, remembered for a year.
  const list = await c.get('/dashboard/payins?status=completed');
  const link = switchOf(list.text)!;
  t.equal(link[1], '/dashboard/payins?status=completed&amp;lang=en');
  t.equal(link[2], 'en');
  const switched = await c.get('/dashboard/payins?status=completed&lang=en');
  t.equal(htmlLang(switched.text), 'en');
  t.equal(h1(switched.text), 'Payins');
  const cookie = switched.setCookies.find((x) => x.startsWith('lang='));
  t.match(cookie, /^lang=en; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax/);

  // Remembered: the next pages, without ?lang=, even with a French browser.
  const keys = await c.get('/dashboard/keys', { 'accept-language': 'fr-FR,fr' });
  t.equal(htmlLang(keys.text), 'en');
  t.equal(h1(keys.text), 'API keys');
  t.equal(switchOf(keys.text)?.[3], 'Français');

  // And back to French, remembered too; a refused form answers in French.
  await c.get('/dashboard?lang=fr');
  const webhooks = await c.get('/dashboard/webhooks');
  t.equal(h1(webhooks.text), 'Webhooks');
  t.match(webhooks.text, /Points de terminaison/);
  const refused = await c.post('/dashboard/keys', { csrf_token: FormClient.csrf(webhooks), expires_in_days: '0', form_nonce: 'stale' });
  t.equal(refused.status, 400);
  t.match(refused.text, /<h1>Non effectué<\/h1>[\s\S]*Rechargez la page et réessayez\./);
});

t.test('an unknown ?lang= is ignored and not remembered', async (t) => {
  const r = await new FormClient(h.url, null).get('/dashboard/sign-in?lang=de');
  t.equal(htmlLang(r.text), 'fr');
  t.equal(r.setCookies.filter((c) => c.startsWith('lang=')).length, 0);
});
