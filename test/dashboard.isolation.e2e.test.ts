// The dashboard shows one merchant: a user of merchant A opening merchant B's payin, transfer, key or
// event by id gets the same 404 as for an id that does not exist, cannot act on them, and never sees
// them in a list. And the money pages for the owner: lists with filters and search, detail pages
// with the status timeline and event history, a transfer with both legs.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { FormClient, signedInClient } from './helpers/dashboard.ts';
import { leg, newCustomer, party, quote, settled } from './helpers/money.ts';
import { createTransfer, transferMerchant, waitFor } from './helpers/transfers.ts';
import { configureWebhook, startReceiver, until } from './helpers/webhooks.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const receiver = await startReceiver();
t.teardown(() => receiver.close());

// Merchant B: a payin (completed), a transfer (completed, both legs), a webhook event, a key.
const b = await transferMerchant(h);
await configureWebhook(h, b, receiver.url);
const customer = await newCustomer(h, b, 'CM', '+237670000001');
const q = await quote(h, b, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
const p = await h.as(b, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001'), metadata: { order_id: 'ORDER-77' } }, { idem: true });
if (p.status !== 201) throw new Error(`payin ${p.status} ${p.text}`);
const payin = await settled(h, b, 'payins', p.body.id, 'completed');
const transfer = await createTransfer(h, b);
await waitFor('transfer completed', async () => (await h.as(b, 'GET', `/transfers/${transfer.id}`)).body.status === 'completed');
const bEvent = await until(async () => (await h.as(b, 'GET', `/events?resource_id=${payin.id}`)).body.data[0], 'payin webhook event');

const a = await h.newMerchant('A');
const userA = await signedInClient(h, a.merchantId, 'a@example.com');
const userB = await signedInClient(h, b.merchantId, 'b@example.com');

t.test("A cannot open B's resources by id: 404, like an unknown id", async (t) => {
  for (const path of [
    `/dashboard/payins/${payin.id}`, `/dashboard/transfers/${transfer.id}`, `/dashboard/payouts/${payin.id}`,
    `/dashboard/keys/${b.keyId}`, `/dashboard/events/${bEvent.id}`,
    `/dashboard/payins/${randomUUID()}`, '/dashboard/payins/not-a-uuid', '/dashboard/keys/not-a-uuid',
  ]) {
    const r = await userA.get(path);
    t.equal(r.status, 404, path);
    t.notOk(r.text.includes(b.apiKey) || r.text.includes('ORDER-77'), `${path} shows nothing of B`);
  }
  for (const path of [`/dashboard/payins/${payin.id}`, `/dashboard/transfers/${transfer.id}`, `/dashboard/keys/${b.keyId}`, `/dashboard/events/${bEvent.id}`]) {
    t.equal((await userB.get(path)).status, 200, `B opens ${path}`);
  }
});

t.test("A cannot act on B's key or event, and B's data is in none of A's lists", async (t) => {
  t.equal((await userA.submit('/dashboard/keys', `/dashboard/keys/${b.keyId}/revoke`, { confirmed: 'yes' })).status, 404);
  t.equal((await userA.submit('/dashboard/keys', `/dashboard/keys/${b.keyId}/rotate`, { confirmed: 'yes', grace_seconds: '0' })).status, 404);
  t.equal((await h.as(b, 'GET', '/wallets')).status, 200, "B's key still works");
  const attempts = bEvent.attempt_count;
  t.equal((await userA.submit('/dashboard/events', `/dashboard/events/${bEvent.id}/redeliver`)).status, 404);
  t.equal((await h.as(b, 'GET', `/events/${bEvent.id}`)).body.attempt_count, attempts, 'no extra attempt');
  for (const path of ['/dashboard/payins', '/dashboard/transfers', '/dashboard/events', '/dashboard/keys']) {
    const r = await userA.get(path);
    t.equal(r.status, 200);
    t.notOk(r.text.includes(payin.id) || r.text.includes(transfer.id) || r.text.includes(b.apiKey), `${path}: nothing of B`);
  }
  for (const path of [`/dashboard/payins?q=${payin.id}`, '/dashboard/payins?q=ORDER-77', `/dashboard/transfers?q=${transfer.id}`]) {
    t.match((await userA.get(path)).text, /Nothing matches/, `${path}: B's resource is not found by search`);
  }
  const home = await userA.get('/dashboard');
  t.match(home.text, /data-currency="XOF">\s*<h3>XOF<\/h3>\s*<p class="big">F\sCFA\s0</, "A's balances, not B's");
});

t.test('lists: status and date filters, search by id, provider reference and metadata value', async (t) => {
  const list = (query: string) => userB.get(`/dashboard/payins${query}`).then((r) => r.text);
  t.match(await list(''), payin.id);
  t.match(await list('?status=completed'), payin.id);
  t.notMatch(await list('?status=failed'), payin.id);
  const day = payin.created_at.slice(0, 10);
  t.match(await list(`?from=${day}&to=${day}`), payin.id);
  t.notMatch(await list('?to=2000-01-01'), payin.id);
  t.match(await list(`?q=${payin.id}`), payin.id);
  t.match(await list('?q=ORDER-77'), payin.id, 'by a metadata value');
  t.match(await list(`?q=${encodeURIComponent(payin.provider_reference)}`), payin.id, 'by provider reference');
  t.notMatch(await list('?q=ORDER-78'), payin.id);
  // Each row names its customer and shows the merchant's metadata (issue 31).
  const row = new RegExp(`<tr data-id="${payin.id}">[\\s\\S]*?</tr>`).exec(await list(''))?.[0] ?? '';
  t.match(row, /<td class="customer">Ama Test<br>/, 'the customer by name');
  t.match(row, customer.slice(0, 8), 'and by id');
  t.match(row, /<td class="metadata"><details class="meta"><summary><code>order_id<\/code>=ORDER-77<\/summary>/, 'the metadata, expandable');
  t.match((await userB.get('/dashboard/transfers')).text, /<th scope="col">Customer<\/th>[\s\S]*<th scope="col">Metadata<\/th>/, 'transfers have the columns too');
  const bad = await userB.get('/dashboard/payins?from=yesterday');
  t.equal(bad.status, 400);
  t.match(bad.text, /YYYY-MM-DD/);
  t.match((await userB.get('/dashboard/transfers?status=completed')).text, transfer.id);
  t.match((await userB.get(`/dashboard/transfers?q=${transfer.id}`)).text, transfer.id);
});

t.test('detail pages: timeline, event history, webhook events; a transfer shows both legs', async (t) => {
  const pi = (await userB.get(`/dashboard/payins/${payin.id}`)).text;
  t.match(pi, /Status timeline/);
  for (const type of ['payin.created', 'payin.pending', 'payin.completed']) t.match(pi, `<code>${type}</code>`, `history has ${type}`);
  t.match(pi, /ORDER-77/);
  t.match(pi, new RegExp(`<dt>Customer</dt><dd>Ama Test <code>${customer}</code></dd>`), 'the customer by name and id');
  t.match(pi, bEvent.id, 'its webhook event is linked');
  const tr = (await userB.get(`/dashboard/transfers/${transfer.id}`)).text;
  t.match(tr, /Collection \(payin leg\)/);
  t.match(tr, /Disbursement \(payout leg\)/);
  t.match(tr, /transfer\.completed/);
  t.equal((tr.match(/class="card leg"/g) ?? []).length, 2, 'two legs');
  // Markup from data is escaped: a metadata value never becomes HTML.
  const q2 = await quote(h, b, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const evil = await h.as(b, 'POST', '/payins', { quote_id: q2.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001'), metadata: { note: '<script>alert(1)</script>' } }, { idem: true });
  const page = (await userB.get(`/dashboard/payins/${evil.body.id}`)).text;
  t.notMatch(page, '<script>alert(1)</script>');
  t.match(page, '&lt;script&gt;alert(1)&lt;/script&gt;');
  t.equal((await new FormClient(h.url).get(`/dashboard/payins/${payin.id}`)).status, 303, 'signed out: to sign-in');
});
