// A new merchant's first visit to the dashboard (issue 31, point 4): the getting-started step "Send a
// test event" is ticked by a delivered test event only (a delivered payment event does not tick it);
// the new-key box shows the key and the secret, each named by its header; the webhook URL hint says
// what this service accepts (http:// and local addresses only with ALLOW_PRIVATE_URLS); a favicon is
// linked from every page and served.
import t from 'tap';
import { startTestApp, request } from './helpers/app.ts';
import { FormClient, signedInClient, type Page } from './helpers/dashboard.ts';
import { settledPayins } from './helpers/money.ts';
import { configureWebhook, startReceiver, until } from './helpers/webhooks.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const receiver = await startReceiver();
t.teardown(() => receiver.close());

/** The checklist step whose title starts with `title`: done or to do. */
function stepState(home: Page, title: string): string | undefined {
  for (const m of home.text.matchAll(/<li class="(done|todo)">([\s\S]*?)<\/li>/g)) {
    if (m[2]!.includes(`<strong>${title}`)) return m[1];
  }
  return undefined;
}

t.test('"Send a test event" is ticked by a delivered test event, not by a delivered payment event', async (t) => {
  const m = await h.newMerchant('Checklist');
  const payer = (await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: true })).body.id;
  await configureWebhook(h, m, receiver.url);
  const c = await signedInClient(h, m.merchantId, 'checklist@example.com');
  const step = 'Send a test event and see it delivered';
  t.equal(stepState(await c.get('/dashboard'), step), 'todo', 'nothing sent yet');

  const [payin] = await settledPayins(h, m, payer, ['+237670000001']);
  await until(async () => (await h.as(m, 'GET', `/events?resource_id=${payin}`)).body.data[0]?.delivery_status === 'delivered', 'the payin event delivered');
  const afterPayment = await c.get('/dashboard');
  t.equal(stepState(afterPayment, 'Make your first API call'), 'done', 'the payment ticks its own step');
  t.equal(stepState(afterPayment, step), 'todo', 'a delivered payin event is not a test event');

  t.equal((await c.submit('/dashboard/webhooks', '/dashboard/webhooks/test')).status, 303);
  await until(async () => (await h.as(m, 'GET', '/events')).body.data.some((e: any) => e.event === 'webhook.test' && e.delivery_status === 'delivered'), 'the test event delivered');
  t.equal(stepState(await c.get('/dashboard'), step), 'done', 'the delivered test event ticks it');
});

t.test('the new-key box shows the key and the secret, each labelled with its header', async (t) => {
  const m = await h.newMerchant('Keys');
  const c = await signedInClient(h, m.merchantId, 'keys@example.com');
  const created = await c.submit('/dashboard/keys', '/dashboard/keys', { expires_in_days: '0' });
  t.equal(created.status, 201);
  const box = /<section class="reveal"[\s\S]*?<\/section>/.exec(created.text)?.[0] ?? '';
  const key = /<dt>API key, header <code>X-Api-Key<\/code><\/dt>\s*<dd class="secret-row">\s*<code id="new-key"[^>]*>([^<]+)</.exec(box)?.[1];
  const secret = /<dt>API secret, header <code>X-Api-Secret<\/code><\/dt>\s*<dd class="secret-row">\s*<code id="new-secret"[^>]*>([^<]+)</.exec(box)?.[1];
  t.match(key, /^pk_/, 'the key, under its header, in the box');
  t.match(secret, /^sk_/, 'the secret, under its header, in the box');
  t.match(box, /data-copy="new-key"/, 'the key can be copied');
  t.match(box, /data-copy="new-secret"/, 'the secret can be copied');
  t.equal((await h.as({ ...m, apiKey: key!, apiSecret: secret! }, 'GET', '/wallets')).status, 200, 'the two, sent in those headers, work');
});

t.test('the webhook URL hint follows ALLOW_PRIVATE_URLS', async (t) => {
  const hint = async (app: typeof h) => {
    const m = await app.newMerchant('Hint');
    const c = await signedInClient(app, m.merchantId, 'hint@example.com');
    return /<p id="url-help" class="help">([\s\S]*?)<\/p>/.exec((await c.get('/dashboard/webhooks')).text)?.[1] ?? '';
  };
  const allowed = await hint(h); // test apps run with ALLOW_PRIVATE_URLS=true
  t.match(allowed, /<code>http:\/\/<\/code>/, 'says http:// is accepted here');
  t.match(allowed, /ALLOW_PRIVATE_URLS/, 'and why');
  t.notMatch(allowed, /on the public internet\./, 'does not claim a public https address is required');
  const m = await h.newMerchant('Local');
  const c = await signedInClient(h, m.merchantId, 'local@example.com');
  const saved = await c.submit('/dashboard/webhooks', '/dashboard/webhooks', { url: receiver.url });
  t.equal(saved.status, 200, `the http:// URL the hint allows is saved (${receiver.url})`);

  const strict = await startTestApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });
  t.teardown(() => strict.stop());
  const required = await hint(strict);
  t.match(required, /An <code>https:\/\/<\/code> address on the public internet\./);
  t.notMatch(required, /http:\/\//, 'no mention of http://');
});

t.test('a favicon: linked from signed-in and public pages, served as SVG', async (t) => {
  const m = await h.newMerchant('Icon');
  const c = await signedInClient(h, m.merchantId, 'icon@example.com');
  const link = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/;
  const home = await c.get('/dashboard');
  const signIn = await new FormClient(h.url).get('/dashboard/sign-in');
  t.match(home.text, link, 'home links it');
  t.match(signIn.text, link, 'the sign-in page links it');
  const href = link.exec(home.text)![1]!;
  const icon = await request(h.url, 'GET', href);
  t.equal(icon.status, 200, `${href} is served without a session`);
  t.match(icon.headers.get('content-type'), /^image\/svg\+xml/);
  t.match(icon.text, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
});
