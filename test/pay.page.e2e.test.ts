// The payer's page over HTTP (CONTRACT §16, pay/): French by default and English on request; the form
// posted without JavaScript creates one payin and answers 303 to its status page, also when sent
// twice; a bad field answers the form again with the problem beside it and creates nothing; a closed
// link answers 410; guessed ids and another link's payin are 404; strict security headers and no
// inline script or style; the limits per address and per link; the QR code of the link's URL.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import QRCode from 'qrcode';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { waitUntil } from './helpers/wait.ts';
import { attemptOf, cmPayer, get, newLink, post } from './helpers/pay.ts';
import { deactivatePaymentLink } from '../commands/payment-links.ts';
import { catalogues } from '../i18n/catalogue.ts';
import { escapeHtml as esc } from '../infra/html.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const fr = catalogues().fr;
const en = catalogues().en;
// Intl separates thousands with a no-break space (U+202F in French): compare on plain spaces.
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ').replace(/&#39;/g, "'");

async function payins(m: MerchantCreds): Promise<Array<Record<string, any>>> {
  const r = await h.as(m, 'GET', '/payins?limit=100');
  return r.body.data;
}

t.test('the page: French by default, English by ?lang=, the cookie it sets, or Accept-Language; only what it may show', async (t) => {
  const m = await h.newMerchant('Boutique Awa');
  const id = await newLink(h, m, { amount: '5000', description: 'Commande 42 <b>deux</b> t-shirts' });
  const page = await get(h, `/pay/${id}`);
  t.equal(page.status, 200);
  t.match(page.text, /<html lang="fr">/);
  t.ok(plain(page.text).includes('5 000 FCFA') || plain(page.text).includes('5 000 F CFA'), 'the amount in French');
  t.ok(page.text.includes(fr['pay.merchant'].replace('{merchant}', 'Boutique Awa')), 'the merchant\'s name');
  t.ok(page.text.includes('Commande 42 &lt;b&gt;deux&lt;/b&gt; t-shirts'), 'the description, escaped');
  t.ok(page.text.includes(esc(fr['pay.field.phone'])) && page.text.includes(esc(fr['country.CM'])));
  t.notOk(page.text.includes(m.merchantId), 'not the merchant id');
  t.match(page.text, /href="\/pay\/[0-9a-f-]{36}\?lang=en" hreflang="en" lang="en">English</, 'a link to the page in English');
  t.equal(page.headers.get('content-language'), 'fr');

  const english = await get(h, `/pay/${id}?lang=en`);
  t.match(english.text, /<html lang="en">/);
  t.ok(plain(english.text).includes(esc(en['pay.field.phone'])));
  t.match(english.headers.get('set-cookie') ?? '', /^lang=en; Path=\/;/, 'the choice is remembered');
  t.match((await get(h, `/pay/${id}`, { 'accept-language': 'en-GB,en;q=0.9' })).text, /<html lang="en">/, 'Accept-Language');
  t.match((await get(h, `/pay/${id}`, { cookie: 'lang=en', 'accept-language': 'fr' })).text, /<html lang="en">/, 'the cookie beats the browser');
  t.match((await get(h, `/pay/${id}?lang=fr`, { cookie: 'lang=en' })).text, /<html lang="fr">/);
  t.notMatch(page.text + english.text, />\s*(pay|country|language)\.[a-z_.]+\s*</, 'no catalogue key shown as text');
  t.match(page.text, /name="name"/, 'the name is asked (the link has no customer)');
  t.notMatch(page.text, /name="otp"/, 'no OTP field: no Cameroonian operator needs one');
});

t.test('security headers, no inline script or style, and the API\'s credentials not asked', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  const page = await get(h, `/pay/${id}`);
  t.equal(page.status, 200, 'public: no API key');
  t.equal(page.headers.get('content-security-policy'),
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'");
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  t.equal(page.headers.get('referrer-policy'), 'no-referrer');
  t.equal(page.headers.get('cache-control'), 'no-store');
  t.notMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'every script is a file');
  t.notMatch(page.text, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
  const css = await get(h, '/pay/static/pay.css');
  t.equal(css.status, 200);
  t.match(css.headers.get('content-type') ?? '', /text\/css/);
  t.equal(css.headers.get('cache-control'), 'public, max-age=3600', 'the stylesheet is cached');
  t.equal(css.headers.get('vary'), null, 'the same in every language');
  t.equal(page.headers.get('vary'), 'Accept, Accept-Language, Cookie', 'a page differs by language');
  t.equal((await get(h, '/pay/static/pay.js')).status, 200);
});

t.test('a form post creates one payin, 303 to its status page; twice with the same attempt still one', async (t) => {
  const m = await h.newMerchant('Boutique Awa');
  const id = await newLink(h, m);
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  const first = await post(h, `/pay/${id}`, cmPayer(attempt));
  t.equal(first.status, 303, first.text.slice(0, 300));
  t.match(first.location, new RegExp(`^/pay/${id}/payments/[0-9a-f-]{36}$`));
  const again = await post(h, `/pay/${id}`, cmPayer(attempt));
  t.equal(again.status, 303);
  t.equal(again.location, first.location, 'the same payment');
  const list = await payins(m);
  t.equal(list.length, 1, 'one payin');
  const payinId = first.location!.split('/').pop()!;
  t.match(list[0], { id: payinId, send_amount: '5000', send_currency: 'XAF', operator_code: 'CM_MTN_MOMO', source: { phone: '+237670000001' } });

  const status = await get(h, first.location!);
  t.equal(status.status, 200);
  t.ok(status.text.includes(payinId), 'its reference');
  await waitUntil('the payin completed', async () => (await h.as(m, 'GET', `/payins/${payinId}`)).body.status === 'completed');
  const done = await waitUntil('the status page says paid', async () => {
    const p = await get(h, first.location!);
    return p.text.includes(esc(fr['pay.status.completed.title'])) ? p : undefined;
  });
  t.notMatch(done.text, /http-equiv="refresh"/, 'final: no more refreshing');
  const closed = await waitUntil('the link completed (max_payments 1)', async () => {
    const p = await get(h, `/pay/${id}`);
    return p.status === 410 ? p : undefined;
  });
  t.ok(closed.text.includes(esc(fr['pay.closed.completed'])));
  t.notMatch(closed.text, /<form/, 'no form on a closed link');
  const resent = await post(h, `/pay/${id}`, cmPayer(attempt));
  t.equal(resent.status, 303, 'the form that completed the link, sent again (Back, reload): its own payment');
  t.equal(resent.location, first.location);
  t.equal((await post(h, `/pay/${id}`, cmPayer(randomUUID()))).status, 410, 'any other attempt: closed');
  t.equal((await payins(m)).length, 1);
});

t.test('a double click: the same form twice at once, one payin', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { maxPayments: null });
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  const both = await Promise.all([post(h, `/pay/${id}`, cmPayer(attempt)), post(h, `/pay/${id}`, cmPayer(attempt))]);
  t.same(both.map((r) => r.status), [303, 303], both.map((r) => r.text.slice(0, 200)).join(' | '));
  t.equal(both[0]!.location, both[1]!.location, 'the same payment');
  t.equal((await payins(m)).length, 1);
});

t.test('a link made for a customer asks no name and pays as that customer', async (t) => {
  const m = await h.newMerchant();
  const customer = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Ngono' }, { idem: true });
  const id = await newLink(h, m, { customerId: customer.body.id });
  const page = await get(h, `/pay/${id}`);
  t.notMatch(page.text, /name="name"/);
  const { name: _name, ...fields } = cmPayer(attemptOf(page.text));
  const paid = await post(h, `/pay/${id}`, fields);
  t.equal(paid.status, 303, paid.text.slice(0, 300));
  t.match(await payins(m), [{ customer_id: customer.body.id }]);
});

t.test('a pending payment\'s page refreshes itself and says what to do on the handset; a failed one says why and offers a fresh form', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { maxPayments: null });
  const pending = await post(h, `/pay/${id}`, cmPayer(attemptOf((await get(h, `/pay/${id}`)).text), '+237 670 00 00 98'));
  const page = await get(h, pending.location!);
  t.match(page.text, /<noscript><meta http-equiv="refresh" content="3"><\/noscript>/);
  t.ok(page.text.includes(esc(fr['pay.status.pending.title'])));
  t.ok(page.text.includes(esc(fr['pay.handset.CM_MTN_MOMO'])), 'MTN MoMo\'s instructions');
  t.match(page.text, /data-poll="\/pay\/[0-9a-f-]{36}\/payments\/[0-9a-f-]{36}\/status"/);
  const json = await get(h, `${pending.location}/status`);
  t.match(JSON.parse(json.text), { status: 'pending', final: false, title: fr['pay.status.pending.title'] });

  const failed = await post(h, `/pay/${id}`, cmPayer(attemptOf((await get(h, `/pay/${id}`)).text), '+237 670 00 00 99'));
  const shown = await waitUntil('the failed page', async () => {
    const p = await get(h, failed.location!, { 'accept-language': 'en' });
    return p.text.includes(esc(en['pay.status.failed.title'])) ? p : undefined;
  });
  t.ok(shown.text.includes(esc(en['pay.failure.insufficient_funds'])), 'why, in plain words');
  t.match(shown.text, new RegExp(`<a class="button" href="/pay/${id}">${en['pay.status.retry']}</a>`));
  t.match(JSON.parse((await get(h, `${failed.location}/status`)).text), { status: 'failed', final: true });
});

t.test('a bad field: 400, the form again with the problem beside the field, in the page\'s language; nothing created', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  const bad = await post(h, `/pay/${id}`, { ...cmPayer(attempt, '+221 77 000 00 01', ''), operator_code: 'SN_WAVE_MOMO' });
  t.equal(bad.status, 400);
  t.match(bad.text, /<div class="error-summary" role="alert"/);
  for (const [field, key] of [['phone', 'pay.error.phone'], ['name', 'pay.error.name'], ['operator_code', 'pay.error.operator']] as const) {
    t.ok(bad.text.includes(`<p class="error" id="${field}-error">${esc(fr[key])}</p>`), `${field}: its message beside it`);
    t.match(bad.text, new RegExp(`<a href="#${field}">`), `${field}: in the summary`);
  }
  t.match(bad.text, /value="\+221 77 000 00 01"/, 'what was typed is kept');
  t.ok(bad.text.includes(`value="${attempt}"`), 'the same attempt');
  const english = await post(h, `/pay/${id}?lang=en`, { ...cmPayer(attempt), phone: '12' });
  t.equal(english.status, 400);
  t.ok(english.text.includes(esc(en['pay.error.phone'])), 'in English');
  const noAttempt = await post(h, `/pay/${id}`, cmPayer('not-an-id'));
  t.equal(noAttempt.status, 400);
  t.ok(noAttempt.text.includes(esc(fr['pay.error.attempt'])));
  t.equal((await payins(m)).length, 0, 'no payin');
  t.equal((await h.as(m, 'GET', '/customers')).body.data.length, 0, 'no customer');
});

t.test('an operator that collects with a code: the field is on the page, and missing it answers 400 beside it', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { currency: 'XOF' });
  const page = await get(h, `/pay/${id}`);
  t.match(page.text, /<div class="field" data-otp-field>/);
  t.match(page.text, /<option value="SN_ORANGE_MOMO" data-otp="1">Orange Money<\/option>/);
  t.notMatch(page.text, /value="CM_MTN_MOMO"/, 'an XOF link: no Cameroonian operator');
  const fields = { attempt_id: attemptOf(page.text), country_code: 'SN', operator_code: 'SN_ORANGE_MOMO', phone: '77 000 00 01', name: 'Awa Diop' };
  const missing = await post(h, `/pay/${id}`, fields);
  t.equal(missing.status, 400);
  t.ok(missing.text.includes(`<p class="error" id="otp-error">${esc(fr['pay.error.otp'])}</p>`));
  const paid = await post(h, `/pay/${id}`, { ...fields, otp: '1234' });
  t.equal(paid.status, 303);
  t.notOk(paid.location!.includes('1234'));
  t.ok((await get(h, paid.location!)).text.includes(esc(fr['pay.handset.SN_ORANGE_MOMO'])));
});

t.test('an operator closed for payins: 400, said beside the operator; nothing created', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  t.equal((await h.admin('PUT', '/admin/operators/CM_ORANGE_MOMO/availability', { payin: 'closed' })).status, 200);
  t.teardown(() => h.admin('PUT', '/admin/operators/CM_ORANGE_MOMO/availability', { payin: 'operational' }));
  const refused = await post(h, `/pay/${id}`, { ...cmPayer(attemptOf((await get(h, `/pay/${id}`)).text)), operator_code: 'CM_ORANGE_MOMO' });
  t.equal(refused.status, 400);
  t.ok(refused.text.includes(`<p class="error" id="operator_code-error">${esc(fr['pay.error.unavailable'])}</p>`));
  t.equal((await payins(m)).length, 0);
  t.equal((await h.as(m, 'GET', '/customers')).body.data.length, 0, 'no customer left behind');
});

t.test('a closed link says why, shows no form, and a form posted to it answers 410 and creates nothing', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  await deactivatePaymentLink(h.app.services, { linkId: id, merchantId: m.merchantId }, { requestId: 'test' });
  const page = await get(h, `/pay/${id}`);
  t.equal(page.status, 410);
  t.ok(page.text.includes(esc(fr['pay.closed.inactive'])));
  t.notMatch(page.text, /<form/);
  const posted = await post(h, `/pay/${id}`, cmPayer(attempt));
  t.equal(posted.status, 410);
  t.equal((await payins(m)).length, 0);
});

t.test('every place held by a pending payment: 409 with the form and "try again in a minute"; an expired link says so', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { maxPayments: 1 });
  const held = await post(h, `/pay/${id}`, cmPayer(attemptOf((await get(h, `/pay/${id}`)).text), '+237 670 00 00 98'));
  t.equal(held.status, 303, 'a payment that stays pending holds the only place');
  const busy = await post(h, `/pay/${id}`, cmPayer(attemptOf((await get(h, `/pay/${id}`)).text)));
  t.equal(busy.status, 409);
  t.ok(busy.text.includes(esc(fr['pay.error.busy'])));
  t.match(busy.text, /<form/, 'the form stays');
  t.equal((await payins(m)).length, 1);

  const soon = new Date(Date.now() + 1500).toISOString();
  const expiring = await newLink(h, m, { expiresAt: soon });
  const attempt = attemptOf((await get(h, `/pay/${expiring}`)).text);
  const expired = await waitUntil('the link expired', async () => {
    const p = await get(h, `/pay/${expiring}`);
    return p.status === 410 ? p : undefined;
  });
  t.ok(expired.text.includes(esc(fr['pay.closed.expired'])));
  t.equal((await post(h, `/pay/${expiring}`, cmPayer(attempt))).status, 410);
});

t.test('guessed ids, another link\'s payin and another merchant\'s: the same plain 404', async (t) => {
  const a = await h.newMerchant();
  const b = await h.newMerchant();
  const linkA = await newLink(h, a, { maxPayments: null });
  const linkA2 = await newLink(h, a);
  const linkB = await newLink(h, b);
  const paid = await post(h, `/pay/${linkA}`, cmPayer(attemptOf((await get(h, `/pay/${linkA}`)).text)));
  const payinId = paid.location!.split('/').pop()!;
  const notFound = await get(h, `/pay/${randomUUID()}`);
  t.equal(notFound.status, 404);
  t.ok(notFound.text.includes(esc(fr['pay.not_found.text'])));
  for (const path of [`/pay/not-an-id`, `/pay/${linkA2}/payments/${payinId}`, `/pay/${linkB}/payments/${payinId}`, `/pay/${linkA}/payments/${randomUUID()}`, `/pay/${linkA}/payments/x`, '/pay/a/b/c/d']) {
    const r = await get(h, path);
    t.equal(r.status, 404, path);
    t.equal(r.text.replace(/\/pay[^"?]*\?lang/, '/pay?lang'), notFound.text.replace(/\/pay[^"?]*\?lang/, '/pay?lang'), `${path}: the same page`);
  }
  t.equal((await get(h, `/pay/${linkB}/payments/${payinId}/status`)).status, 404);
  t.equal((await get(h, `/pay/${linkA}/payments/${payinId}`)).status, 200, 'the payin under its own link');
  t.equal((await get(h, `/pay/${randomUUID()}`, { 'accept-language': 'en' })).text.includes(esc(en['pay.not_found.title'])), true, '404 in the page\'s language');
});

t.test('forms from another site, of another type, or too large are refused', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  t.equal((await post(h, `/pay/${id}`, cmPayer(attempt), { 'sec-fetch-site': 'cross-site' })).status, 403);
  t.equal((await post(h, `/pay/${id}`, cmPayer(attempt), { 'sec-fetch-site': 'same-site' })).status, 403);
  const foreign = await fetch(`${h.url}/pay/${id}`, {
    method: 'POST', redirect: 'manual', body: new URLSearchParams(cmPayer(attempt)).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
  });
  t.equal(foreign.status, 403);
  t.ok((await foreign.text()).includes(esc(fr['pay.refused.other_site'])));
  const json = await fetch(`${h.url}/pay/${id}`, { method: 'POST', body: JSON.stringify(cmPayer(attempt)), headers: { 'content-type': 'application/json' } });
  t.equal(json.status, 415);
  t.equal((await post(h, `/pay/${id}`, { ...cmPayer(attempt), name: 'x'.repeat(20_000) })).status, 413);
  t.equal((await payins(m)).length, 0);
});

t.test('the page\'s script\'s way: the same form asking for JSON, and the status as JSON', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  const bad = await post(h, `/pay/${id}`, { ...cmPayer(attempt), phone: '' }, { accept: 'application/json' });
  t.equal(bad.status, 400);
  const badBody = JSON.parse(bad.text);
  t.match(badBody.html, /id="phone-error"/);
  t.equal(badBody.title, fr['pay.title'].replace('{merchant}', 'Test merchant'));
  const ok = await post(h, `/pay/${id}`, cmPayer(attempt), { accept: 'application/json' });
  t.equal(ok.status, 200);
  const body = JSON.parse(ok.text);
  t.match(body.location, new RegExp(`^/pay/${id}/payments/[0-9a-f-]{36}$`));
  t.match(body.html, /<section id="status" class="status s-(pending|completed)"/);
  t.equal((await payins(m)).length, 1);
});

t.test('the QR code: an SVG of the link\'s absolute URL', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m);
  const qr = await get(h, `/pay/${id}/qr.svg`);
  t.equal(qr.status, 200);
  t.match(qr.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  t.match(qr.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* viewBox="0 0 \d+ \d+"[\s\S]*<path[\s\S]*<\/svg>\s*$/);
  const expected = await QRCode.toString(`${h.url}/pay/${id}`, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  t.equal(qr.text, expected, 'the code of the link\'s URL (the request\'s origin: no PUBLIC_BASE_URL here)');
  t.equal((await get(h, `/pay/${randomUUID()}/qr.svg`)).status, 404);
});

t.test('the limits: requests per client address, payment attempts per address and per link (429 in the page\'s language)', async (t) => {
  const limited = await startTestApp({ env: { PAY_REQUESTS_PER_MINUTE: '6', PAY_SUBMITS_PER_MINUTE: '2', PUBLIC_BASE_URL: 'https://pay.example.com/' } });
  t.teardown(() => limited.stop());
  const m = await limited.newMerchant();
  const id = await newLink(limited, m, { maxPayments: null });
  // (This app has PUBLIC_BASE_URL: the QR code is of the link's URL under it.)
  const qr = await get(limited, `/pay/${id}/qr.svg`);
  t.equal(qr.text, await QRCode.toString(`https://pay.example.com/pay/${id}`, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }));
  const attempt = attemptOf((await get(limited, `/pay/${id}`)).text);
  const bad = { ...cmPayer(attempt), phone: '' };
  t.equal((await post(limited, `/pay/${id}`, bad)).status, 400);
  t.equal((await post(limited, `/pay/${id}`, bad)).status, 400);
  const third = await post(limited, `/pay/${id}`, bad);
  t.equal(third.status, 429, 'the third attempt within the minute');
  t.ok(Number(third.headers.get('retry-after')) > 0);
  t.match(third.text, new RegExp(fr['pay.rate_limited.title']));
  let last = await get(limited, `/pay/${id}`, { 'accept-language': 'en' });
  for (let i = 0; i < 5 && last.status !== 429; i++) last = await get(limited, `/pay/${id}`, { 'accept-language': 'en' });
  t.equal(last.status, 429, 'past the requests per minute');
  t.ok(last.text.includes(esc(en['pay.rate_limited.title'])));
});
