// A dashboard form sent twice (reload and "Resend", a double click, Back then submit) does its work
// once: every form that creates something or rotates a secret carries a one-time nonce, and a second
// POST with it answers "already done" without the secret, which is stored nowhere in clear.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { FormClient, signedInClient, type Page } from './helpers/dashboard.ts';
import { startReceiver, until, deliveriesIdle, noDeliveryJobsFor } from './helpers/webhooks.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const receiver = await startReceiver();
t.teardown(() => receiver.close());
const s = h.app.services;

const keysOf = async (m: MerchantCreds) => (await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data as { id: string; api_key: string }[];
const merchantEvents = async (m: MerchantCreds, type: string) =>
  (await s.store.readStream(`merchant-${m.merchantId}`)).filter((e) => e.type === type).length;
/** Every event of the store, in order (a fresh database per test app: small). */
async function allEvents() {
  const out = [];
  for (let after = 0n; ;) {
    const batch = await s.store.readAll(after, 1000);
    if (batch.length === 0) return out;
    out.push(...batch);
    after = batch[batch.length - 1]!.position;
  }
}
const testEvents = async (m: MerchantCreds) => (await allEvents()).filter((e) => e.type === 'webhook.test' && e.data.merchant_id === m.merchantId).length;
const secretOf = (p: Page, id: string) => new RegExp(`id="${id}"[^>]*>([^<]+)<`).exec(p.text)?.[1];
/** What the idempotency store kept for this merchant's dashboard forms. */
const stored = async (m: MerchantCreds) => JSON.stringify(await s.knex('idempotency_keys').where({ merchant_id: m.merchantId }).select('key', 'response_body'));

/** The page's CSRF token and the nonce of its form posting to `action`. */
async function formOf(c: FormClient, path: string, action: string) {
  const p = await c.get(path);
  const nonce = FormClient.nonce(p, action);
  if (!nonce) throw new Error(`no nonce on ${action} (${path})`);
  return { csrf_token: FormClient.csrf(p), form_nonce: nonce };
}

t.test('create key: the same form twice creates one key; the second answer has no secret', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'create@example.com');
  const before = (await keysOf(m)).length;
  const form = await formOf(c, '/dashboard/keys', '/dashboard/keys');
  t.match(form.form_nonce, /^[A-Za-z0-9_-]{22}$/, '16 random bytes, base64url');

  const first = await c.post('/dashboard/keys', { ...form, expires_in_days: '0' });
  t.equal(first.status, 201);
  const secret = secretOf(first, 'new-secret')!;
  t.match(secret, /^sk_/, 'the first answer reveals the secret');
  const second = await c.post('/dashboard/keys', { ...form, expires_in_days: '0' });
  t.equal(second.status, 409, 'not done again');
  t.notOk(second.text.includes(secret), 'the secret is not shown again');
  t.notMatch(second.text, /sk_[A-Za-z0-9_-]/, 'no secret at all');
  t.match(second.text, /The secret was shown once and cannot be shown again; rotate the key or create another if you lost it\./);
  t.match(second.text, /href="\/dashboard\/keys"/, 'a link to the keys page');
  const keys = await keysOf(m);
  t.equal(keys.length, before + 1, 'exactly one new key');
  const created = keys.find((k) => k.id !== m.keyId)!;
  t.ok(second.text.includes(created.api_key), 'the repeat names the key the first one created');
  t.equal((await h.as({ ...m, apiKey: created.api_key, apiSecret: secret }, 'GET', '/wallets')).status, 200, 'and the revealed secret is that key\'s');

  // A fresh page has a fresh nonce: creating another key on purpose still works.
  const again = await c.post('/dashboard/keys', { ...(await formOf(c, '/dashboard/keys', '/dashboard/keys')), expires_in_days: '0' });
  t.equal(again.status, 201);
  t.equal((await keysOf(m)).length, before + 2);
  const kept = await stored(m);
  t.notOk(kept.includes(secret) || kept.includes(secretOf(again, 'new-secret')!), 'no secret in the idempotency store');
});

t.test('create key: a double click (two POSTs at once) creates one key', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'double@example.com');
  const form = await formOf(c, '/dashboard/keys', '/dashboard/keys');
  const answers = await Promise.all([1, 2].map(() => c.post('/dashboard/keys', { ...form, expires_in_days: '0' })));
  t.same(answers.map((a) => a.status).sort(), [201, 409], 'one creates, the other waits and answers "already done"');
  t.equal((await keysOf(m)).length, 2, 'the first key and one new one');
});

t.test('create key: without a nonce, or with the nonce in another session, is a new form', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'nononce@example.com');
  const form = await formOf(c, '/dashboard/keys', '/dashboard/keys');
  const missing = await c.post('/dashboard/keys', { csrf_token: form.csrf_token, expires_in_days: '0' });
  t.equal(missing.status, 400, 'a form without its nonce is refused');
  t.match(missing.text, /Reload the page/);
  t.equal((await c.post('/dashboard/keys', { ...form, form_nonce: 'short' })).status, 400, 'a malformed nonce too');
  t.equal((await keysOf(m)).length, 1, 'nothing created');
  t.equal((await c.post('/dashboard/keys', { ...form, expires_in_days: '0' })).status, 201);
  const other = await signedInClient(h, m.merchantId, 'nononce2@example.com');
  const otherCsrf = FormClient.csrf(await other.get('/dashboard/keys'));
  t.equal((await other.post('/dashboard/keys', { csrf_token: otherCsrf, form_nonce: form.form_nonce, expires_in_days: '0' })).status, 201,
    'the key is derived from session and nonce: another session is not answered from this one');
  t.equal((await keysOf(m)).length, 3);
});

t.test('rotate key (confirmed on a page of its own): one rotation', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'rotate@example.com');
  const form = await formOf(c, '/dashboard/keys', `/dashboard/keys/${m.keyId}/rotate`);
  const ask = await c.post(`/dashboard/keys/${m.keyId}/rotate`, { ...form, grace_seconds: '0' });
  t.equal(ask.status, 200, 'no JavaScript: the server asks');
  t.equal(FormClient.nonce(ask, `/dashboard/keys/${m.keyId}/rotate`), form.form_nonce, 'the confirmation carries the form\'s nonce');
  const confirm = { ...form, grace_seconds: '0', confirmed: 'yes' };
  const first = await c.post(`/dashboard/keys/${m.keyId}/rotate`, confirm);
  t.equal(first.status, 201);
  const secret = secretOf(first, 'new-secret')!;
  t.match(secret, /^sk_/);
  const second = await c.post(`/dashboard/keys/${m.keyId}/rotate`, confirm);
  t.equal(second.status, 409);
  t.notMatch(second.text, /sk_[A-Za-z0-9_-]/, 'no secret');
  t.match(second.text, /shown once and cannot be shown again/);
  t.equal(await merchantEvents(m, 'merchant.api_key_rotated'), 1, 'rotated once');
  t.equal((await h.as({ ...m, apiSecret: secret }, 'GET', '/wallets')).status, 200, 'the secret shown first is the one in force');
  t.equal((await h.as(m, 'GET', '/wallets')).status, 401, 'the old one stopped (grace 0)');
});

t.test('webhook: setting the URL and rotating the secret each happen once; the shown secret is the one signing', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'hooks@example.com');
  const setForm = { ...(await formOf(c, '/dashboard/webhooks', '/dashboard/webhooks')), url: receiver.url };
  const set1 = await c.post('/dashboard/webhooks', setForm);
  t.equal(set1.status, 200);
  t.match(secretOf(set1, 'signing-secret'), /^whsec_/);
  const set2 = await c.post('/dashboard/webhooks', setForm);
  t.equal(set2.status, 409);
  t.notMatch(set2.text, /whsec_/);
  t.equal(await merchantEvents(m, 'merchant.webhook_configured'), 1, 'saved once');

  const form = await formOf(c, '/dashboard/webhooks', '/dashboard/webhooks/rotate-secret');
  const ask = await c.post('/dashboard/webhooks/rotate-secret', form);
  t.equal(FormClient.nonce(ask, '/dashboard/webhooks/rotate-secret'), form.form_nonce, 'the confirmation carries the form\'s nonce');
  const first = await c.post('/dashboard/webhooks/rotate-secret', { ...form, confirmed: 'yes' });
  t.equal(first.status, 200);
  const secret = secretOf(first, 'signing-secret')!;
  t.match(secret, /^whsec_/);
  const second = await c.post('/dashboard/webhooks/rotate-secret', { ...form, confirmed: 'yes' });
  t.equal(second.status, 409);
  t.notOk(second.text.includes(secret));
  t.notMatch(second.text, /whsec_/, 'no secret');
  t.match(second.text, /The signing secret was shown once and cannot be shown again; rotate it if you lost it\./);
  t.match(second.text, /href="\/dashboard\/webhooks"/);
  t.equal(await merchantEvents(m, 'merchant.webhook_configured'), 2, 'the signing secret rotated once');
  const row = await s.knex('merchants').where({ id: m.merchantId }).first('webhook_secret_sealed');
  t.equal(s.secrets.decrypt(row.webhook_secret_sealed), secret, 'the secret shown is the one that signs');
  t.notOk((await stored(m)).includes('whsec_'), 'no signing secret in the idempotency store');
});

t.test('send test event and redeliver: the same form twice sends one event and adds one attempt', async (t) => {
  const m = await h.newMerchant();
  const c = await signedInClient(h, m.merchantId, 'testevent@example.com');
  await c.submit('/dashboard/webhooks', '/dashboard/webhooks', { url: receiver.url });
  const form = await formOf(c, '/dashboard/webhooks', '/dashboard/webhooks/test');
  const first = await c.post('/dashboard/webhooks/test', form);
  t.equal(first.status, 303);
  t.equal(first.location, '/dashboard/webhooks?done=test_sent');
  const second = await c.post('/dashboard/webhooks/test', form);
  t.equal(second.status, 303, 'Post/Redirect/Get either way');
  t.equal(second.location, '/dashboard/webhooks?done=test_sent_before');
  t.match((await c.get(second.location!)).text, /already sent its test event: no other was sent/);
  t.equal(await testEvents(m), 1, 'one test event');

  const event = await until(async () => (await h.as(m, 'GET', '/events')).body.data.find((e: { event: string; delivery_status: string }) =>
    e.event === 'webhook.test' && e.delivery_status === 'delivered'), 'the test event delivered');
  const redeliver = await formOf(c, `/dashboard/events/${event.id}`, `/dashboard/events/${event.id}/redeliver`);
  t.equal((await c.post(`/dashboard/events/${event.id}/redeliver`, redeliver)).location, `/dashboard/events/${event.id}?done=redelivered`);
  t.equal((await c.post(`/dashboard/events/${event.id}/redeliver`, redeliver)).location, `/dashboard/events/${event.id}?done=redelivered_before`);
  await until(async () => (await h.as(m, 'GET', `/events/${event.id}`)).body.attempt_count === 2, 'the redelivery attempt');
  // A second redelivery, were one scheduled, would be a job of its own: due now, so made before
  // the deliveries are idle, or left over after.
  await deliveriesIdle(h);
  await noDeliveryJobsFor(h, event.id);
  t.equal((await h.as(m, 'GET', `/events/${event.id}`)).body.attempt_count, 2, 'one extra attempt, not two');
  t.equal(receiver.deliveries.filter((d) => d.headers['x-service-webhook-id'] === event.id).length, 2);
});
