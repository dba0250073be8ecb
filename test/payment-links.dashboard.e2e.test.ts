// Payment links in the dashboard (CONTRACT §16, issue 42): create one from the form (once per form),
// list them, a link's page with its address to share, its QR code image (the payer's page module's
// qr_svg_url, allowed by the page's CSP) and download link, and its payins; deactivate it
// (confirmed, once); another merchant's link is the same 404 as none; in French and in English.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { FormClient, signedInClient, type Page } from './helpers/dashboard.ts';
import { until } from './helpers/money.ts';
import { payThroughLink } from '../commands/payment-links.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const m = await h.newMerchant('Boutique Awa');
const other = await h.newMerchant('Autre');
const en = await signedInClient(h, m.merchantId, 'links@example.com');

const hidden = (p: Page) => Object.fromEntries([...p.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((x) => [x[1]!, x[2]!]));
const linkIdOf = (location: string | null) => /^\/dashboard\/links\/([0-9a-f-]{36})\?done=link_created$/.exec(location ?? '')?.[1];

t.test('create from the form: once per form, then listed; a refused field shows the form again and creates nothing', async (t) => {
  const form = await en.get('/dashboard/links');
  t.equal(form.status, 200);
  t.match(form.text, /<h1>Payment links<\/h1>/);
  t.match(form.text, /No payment link yet\./);
  const fields = { csrf_token: FormClient.csrf(form), form_nonce: FormClient.nonce(form, '/dashboard/links')!, amount: '5000', currency: 'XAF', description: 'Robe wax, taille M', expires: '', max_payments: '3' };
  const made = await en.post('/dashboard/links', fields);
  t.equal(made.status, 303);
  const id = linkIdOf(made.location)!;
  t.ok(id, 'to the new link\'s page');
  const again = await en.post('/dashboard/links', fields);
  t.equal(again.status, 409, 'the same form again: nothing more');
  t.match(again.text, new RegExp(`already sent: it created the payment link <a href="/dashboard/links/${id}">`));
  const api = await h.as(m, 'GET', '/payment-links');
  t.same(api.body.data.map((l: any) => l.id), [id], 'one link');
  t.match(api.body.data[0], { amount: '5000', currency: 'XAF', description: 'Robe wax, taille M', max_payments: 3, expires_at: null, status: 'active' });

  const list = await en.get('/dashboard/links');
  const row = new RegExp(`<tr data-link-id="${id}" data-status="active">([\\s\\S]*?)</tr>`).exec(list.text)?.[1] ?? '';
  t.match(row, />active</);
  t.match(row, /FCFA\s5,000/);
  t.match(row, /Robe wax, taille M/);
  t.match(row, /0 of 3/);

  const page = await en.get('/dashboard/links');
  const bad = await en.post('/dashboard/links', { csrf_token: FormClient.csrf(page), form_nonce: FormClient.nonce(page, '/dashboard/links')!, amount: '50', currency: 'XAF', description: 'Trop petit', expires: '2000-01-01', max_payments: '' });
  t.equal(bad.status, 400);
  t.match(bad.text, /Enter a whole amount between 100 and 1,000,000 francs\./);
  t.match(bad.text, /value="Trop petit"/, 'the form as typed');
  const past = await en.post('/dashboard/links', { csrf_token: FormClient.csrf(page), form_nonce: FormClient.nonce(page, '/dashboard/links')!, amount: '500', currency: 'XOF', description: 'Hier', expires: '2000-01-01', max_payments: '' });
  t.equal(past.status, 400);
  t.match(past.text, /The expiry must be a day in the future\./);
  t.equal((await h.as(m, 'GET', '/payment-links')).body.data.length, 1, 'nothing created');
});

t.test('a link\'s page: the address to share, its QR code, its payins; deactivated once confirmed', async (t) => {
  const expires = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
  const form = await en.get('/dashboard/links');
  const made = await en.post('/dashboard/links', { csrf_token: FormClient.csrf(form), form_nonce: FormClient.nonce(form, '/dashboard/links')!, amount: '2500', currency: 'XAF', description: 'Pagne', expires, max_payments: '' });
  const id = linkIdOf(made.location)!;
  const api = (await h.as(m, 'GET', `/payment-links/${id}`)).body;
  t.match(api, { max_payments: null, expires_at: new Date(Date.parse(`${expires}T00:00:00Z`) + 86_400_000).toISOString() }, 'unlimited, until the end of that day');

  const payin = await payThroughLink(h.app.services, {
    linkId: id, attemptId: randomUUID(), countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '670000001', name: 'Awa Diop', otp: undefined,
  }, { requestId: 'test', actor: 'pay-page' });
  await until('the payin completed', async () => (await h.as(m, 'GET', `/payins/${payin.payinId}`)).body.status === 'completed');
  // The link counts the payment in its own stream, recorded after the payin's completion reaches it
  // (a bus hop, then the link's projection): a page read in between shows the payin and 0 payments.
  await until('the link counted the payment', async () => (await h.as(m, 'GET', `/payment-links/${id}`)).body.payments_count === 1);

  const page = await en.get(`/dashboard/links/${id}?done=link_created`);
  t.equal(page.status, 200);
  t.match(page.text, /Payment link created/);
  t.match(page.text, new RegExp(`<code id="link-url" class="secret" tabindex="0">${api.url}</code>`), 'the address, copyable');
  t.match(page.text, /data-copy="link-url"/);
  t.match(page.text, new RegExp(`<img class="qr" src="${api.qr_svg_url}"[^>]* alt="QR code of the payment link ${api.url}">`), 'the QR code image');
  t.match(page.text, new RegExp(`<a href="${api.qr_svg_url}" download="payment-link-${id}.svg">`), 'to download and print');
  t.match(page.headers.get('content-security-policy'), /img-src 'self' data:;/, 'the image is same-origin: allowed');
  const qr = await fetch(api.qr_svg_url);
  t.equal(qr.status, 200, 'the image is served (the payer\'s page module)');
  t.match(qr.headers.get('content-type'), /^image\/svg\+xml/);
  t.match(page.text, new RegExp(`<tr data-id="${payin.payinId}">[\\s\\S]*?Awa Diop`), 'its payin, with the payer');
  t.match(page.text, /1 \(no limit\)/);
  const payinPage = await en.get(`/dashboard/payins/${payin.payinId}`);
  t.match(payinPage.text, new RegExp(`<dt>Payment link</dt><dd><a href="/dashboard/links/${id}">`), 'the payin names its link');

  // Deactivate: asked first (no JavaScript), then once.
  const asked = await en.post(`/dashboard/links/${id}/deactivate`, { csrf_token: FormClient.csrf(page), form_nonce: FormClient.nonce(page, `/dashboard/links/${id}/deactivate`)! });
  t.equal(asked.status, 200);
  t.match(asked.text, /Deactivate this payment link\?/);
  t.equal((await h.as(m, 'GET', `/payment-links/${id}`)).body.status, 'active', 'not yet');
  const confirm = hidden(asked);
  const done = await en.post(`/dashboard/links/${id}/deactivate`, confirm);
  t.equal(done.status, 303);
  t.equal(done.location, `/dashboard/links/${id}?done=link_deactivated`);
  t.equal((await h.as(m, 'GET', `/payment-links/${id}`)).body.status, 'inactive');
  t.equal((await en.post(`/dashboard/links/${id}/deactivate`, confirm)).status, 409, 'the same form again: already done');
  const after = await en.get(`/dashboard/links/${id}`);
  t.match(after.text, /<span class="badge s-inactive" data-status="inactive">inactive<\/span>/);
  t.notMatch(after.text, new RegExp(`action="/dashboard/links/${id}/deactivate"`), 'no deactivate button any more');
});

t.test('another merchant\'s link is the same 404 as none, for reading and deactivating', async (t) => {
  const theirs = await h.as(other, 'POST', '/payment-links', { amount: '1000', currency: 'XOF', description: 'Secret' }, { idem: true });
  const id = theirs.body.id as string;
  const read = await en.get(`/dashboard/links/${id}`);
  t.equal(read.status, 404);
  t.notMatch(read.text, /Secret/);
  t.equal((await en.get(`/dashboard/links/${randomUUID()}`)).status, 404);
  t.equal((await en.get('/dashboard/links/not-an-id')).status, 404);
  const page = await en.get('/dashboard/links');
  t.notMatch(page.text, new RegExp(id), 'not listed');
  const tried = await en.post(`/dashboard/links/${id}/deactivate`, { csrf_token: FormClient.csrf(page), confirmed: 'yes', form_nonce: FormClient.nonce(page, '/dashboard/links')! });
  t.equal(tried.status, 404);
  t.equal((await h.as(other, 'GET', `/payment-links/${id}`)).body.status, 'active', 'still active');
});

t.test('in French: the list, the form and a link\'s page', async (t) => {
  const fr = await signedInClient(h, m.merchantId, 'liens@example.com', undefined, 'fr');
  const list = await fr.get('/dashboard/links');
  t.match(list.text, /<html lang="fr">/);
  t.match(list.text, /<h1>Liens de paiement<\/h1>/);
  t.match(list.text, /<button type="submit">Créer le lien de paiement<\/button>/);
  t.match(list.text, /<label for="link-description">Description<\/label>/);
  t.match(list.text, />désactivé</, 'a deactivated link in French');
  t.match(list.text, /2\s500\sFCFA/, 'amounts the French way');
  const id = /<tr data-link-id="([0-9a-f-]{36})" data-status="active">/.exec(list.text)![1]!;
  const page = await fr.get(`/dashboard/links/${id}`);
  t.match(page.text, /Adresse à partager/);
  t.match(page.text, /Télécharger le code QR \(SVG\)/);
  t.match(page.text, /<button type="submit" class="danger">Désactiver<\/button>/);
  t.match(page.text, /0 sur 3/);
});

t.test('with PUBLIC_BASE_URL the QR code is an image of that origin, and the CSP allows it', async (t) => {
  const hp = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://pay.example.com/' } });
  t.teardown(() => hp.stop());
  const mp = await hp.newMerchant();
  const link = (await hp.as(mp, 'POST', '/payment-links', { amount: '1000', currency: 'XAF', description: 'Savon' }, { idem: true })).body;
  const c = await signedInClient(hp, mp.merchantId, 'public@example.com');
  const page = await c.get(`/dashboard/links/${link.id}`);
  t.match(page.text, new RegExp(`<img class="qr" src="https://pay\\.example\\.com/pay/${link.id}/qr\\.svg"`));
  t.match(page.headers.get('content-security-policy'), /img-src 'self' data: https:\/\/pay\.example\.com;/);
});
