// The dashboard's API keys page and key scopes (CONTRACT §18, issue 43 point 5), over HTTP as a
// browser posts the form: full access by default, read-only, or chosen resources; the keys page and a
// key's page show each key's access; the key made works with exactly that access on the API; a choice
// not on the form, or chosen resources with none chosen, is refused and creates nothing; both languages.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { signedInClient, type FormClient, type Page } from './helpers/dashboard.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const m = await h.newMerchant('Dashboard scopes');
const c = await signedInClient(h, m.merchantId, 'scopes@example.com');

const revealed = (p: Page, id: string) => new RegExp(`<code id="${id}" class="secret" tabindex="0">([^<]+)</code>`).exec(p.text)?.[1];
const created = (p: Page): MerchantCreds => ({ merchantId: m.merchantId, keyId: '', apiKey: revealed(p, 'new-key')!, apiSecret: revealed(p, 'new-secret')! });
const scopesOf = async (apiKey: string) =>
  (await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data.find((k: any) => k.api_key === apiKey)?.scopes;
/** The row of a key on the keys page: its access cell. */
const accessCell = (p: Page, apiKey: string) => new RegExp(`<tr data-key="${apiKey}">[\\s\\S]*?<td class="key-access">([\\s\\S]*?)</td>`).exec(p.text)?.[1];
const create = (client: FormClient, fields: Record<string, string>) => client.submit('/dashboard/keys', '/dashboard/keys', { expires_in_days: '0', ...fields });

t.test('the create form offers full access (checked), read-only and a level per resource', async (t) => {
  const page = await c.get('/dashboard/keys');
  t.match(page.text, /<label class="choice"><input type="radio" name="access" value="all" checked> Full access/);
  t.match(page.text, /name="access" value="read_only"> Read-only \(every resource\)/);
  t.match(page.text, /name="access" value="custom"> Chosen resources/);
  for (const r of ['customers', 'quotes', 'payins', 'payouts', 'transfers', 'refunds', 'payment_links', 'wallets', 'events', 'webhooks']) {
    t.match(page.text, `<select id="scope_${r}" name="scope_${r}"><option value="none">No access</option><option value="read">Read</option><option value="write">Read and write</option></select>`);
  }
  t.match(accessCell(page, m.apiKey), 'Full access', 'the key made by the operator with no scopes: full access');
});

t.test('full access by default', async (t) => {
  const r = await create(c, {});
  t.equal(r.status, 201);
  t.same(await scopesOf(created(r).apiKey), ['*']);
});

t.test('read-only: every resource read; reads work, writes are refused 403 naming the scope', async (t) => {
  const r = await create(c, { access: 'read_only' });
  t.equal(r.status, 201);
  const key = created(r);
  t.equal((await scopesOf(key.apiKey)).length, 10);
  t.match(accessCell(r, key.apiKey), 'Read-only', 'the keys page says read-only');
  t.equal((await h.as(key, 'GET', '/payins')).status, 200);
  const write = await h.as(key, 'POST', '/payment-links', { amount: '5000', currency: 'XAF', description: 'x' }, { idem: true });
  t.equal(write.status, 403);
  t.match(write.body.error, { code: 'forbidden', message: /payment_links:write/ });
});

t.test('chosen resources: the levels chosen, shown on the keys page and the key\'s page; the API follows them', async (t) => {
  const r = await create(c, { access: 'custom', scope_payins: 'write', scope_wallets: 'read', scope_refunds: 'none' });
  t.equal(r.status, 201);
  const key = created(r);
  t.same(await scopesOf(key.apiKey), ['payins:write', 'wallets:read']);
  t.match(accessCell(r, key.apiKey), /<code>payins:write<\/code>[\s\S]*<code>wallets:read<\/code>/);
  const keyId = (await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data.find((k: any) => k.api_key === key.apiKey).id;
  t.match((await c.get(`/dashboard/keys/${keyId}`)).text, /<dd class="key-access"><ul class="scopes"><li><code>payins:write<\/code><\/li><li><code>wallets:read<\/code><\/li><\/ul><\/dd>/);
  t.equal((await h.as(key, 'GET', '/wallets')).status, 200);
  t.equal((await h.as(key, 'GET', '/payins')).status, 200, 'write includes read');
  t.match((await h.as(key, 'GET', '/refunds')).body.error, { code: 'forbidden', message: /refunds:read/ });
});

t.test('refused: chosen resources with none chosen, an access or a level not on the form; no key is made', async (t) => {
  const count = async () => (await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data.length;
  const before = await count();
  const none = await create(c, { access: 'custom' });
  t.equal(none.status, 400);
  t.match(none.text, 'Give the key access to at least one resource, or choose full access');
  t.equal((await create(c, { access: 'admin' })).status, 400);
  const level = await create(c, { access: 'custom', scope_payins: 'delete' });
  t.equal(level.status, 400);
  t.match(level.text, 'Choose the key&#39;s access from the list');
  t.equal(await count(), before);
});

t.test('in French: the form and the access column', async (t) => {
  const fr = await signedInClient(h, m.merchantId, 'portees@example.com', undefined, 'fr');
  const page = await fr.get('/dashboard/keys');
  t.match(page.text, 'Lecture seule (toutes les ressources)');
  t.match(page.text, '<option value="write">Lecture et écriture</option>');
  t.match(page.text, 'Liens de paiement');
  t.match(accessCell(page, m.apiKey), 'Accès complet');
  const none = await create(fr, { access: 'custom' });
  t.match(none.text, 'Donnez à la clé l’accès à au moins une ressource');
});
