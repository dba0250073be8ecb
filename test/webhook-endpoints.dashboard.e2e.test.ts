// The dashboard's Webhooks page manages endpoints (CONTRACT.md §11): add one (its secret shown once,
// a resent form adds nothing and shows no secret), edit its URL and filter, disable (confirmed) and
// enable, rotate its secret (confirmed; the secret shown is the one that signs), delete (confirmed);
// the CSRF token is required; another merchant's endpoint is a 404.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { FormClient, signedInClient, type Page } from './helpers/dashboard.ts';
import { startReceiver, until } from './helpers/webhooks.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const rx = await startReceiver();
t.teardown(() => rx.close());

const secretOf = (p: Page) => /id="signing-secret"[^>]*>([^<]+)</.exec(p.text)?.[1];

t.test('add, edit, disable, enable, rotate and delete an endpoint from the Webhooks page', async (t) => {
  const m = await h.newMerchant('Dashboard endpoints');
  const c = await signedInClient(h, m.merchantId, 'endpoints@example.com');
  const page = await c.get('/dashboard/webhooks');
  t.match(page.text, /No endpoint yet/);
  const csrf = FormClient.csrf(page);
  const nonce = FormClient.nonce(page, '/dashboard/webhooks/endpoints')!;
  t.ok(nonce, 'the add form carries a one-time nonce');
  const addForm = [['csrf_token', csrf], ['form_nonce', nonce], ['url', rx.url], ['description', 'tests only'], ['events', 'webhook.test'], ['events', 'payin.completed']];

  t.equal((await c.post('/dashboard/webhooks/endpoints', Object.fromEntries(addForm.filter(([k]) => k !== 'csrf_token')))).status, 403, 'no CSRF token: refused');
  const added = await c.post('/dashboard/webhooks/endpoints', addForm as unknown as Record<string, string>);
  t.equal(added.status, 201);
  const secret = secretOf(added)!;
  t.match(secret, /^whsec_/, 'the secret, shown once');
  const again = await c.post('/dashboard/webhooks/endpoints', addForm as unknown as Record<string, string>);
  t.equal(again.status, 409, 'the same form again adds nothing');
  t.notMatch(again.text, /whsec_/, 'and shows no secret');
  const [ep, ...more] = (await h.as(m, 'GET', '/webhook-endpoints')).body.data;
  t.equal(more.length, 0, 'one endpoint');
  t.match(ep, { url: rx.url, description: 'tests only', enabled_events: ['webhook.test', 'payin.completed'], status: 'enabled' });
  t.match((await c.get('/dashboard/webhooks')).text, new RegExp(`action="/dashboard/webhooks/endpoints/${ep.id}"`), 'listed with its edit form');

  const edited = await c.post(`/dashboard/webhooks/endpoints/${ep.id}`, { csrf_token: csrf, url: `${rx.url}?v=2`, description: '', events: '*' });
  t.equal(edited.status, 303);
  t.equal(edited.location, '/dashboard/webhooks?done=endpoint_saved');
  t.match((await h.as(m, 'GET', `/webhook-endpoints/${ep.id}`)).body, { url: `${rx.url}?v=2`, enabled_events: ['*'], description: null });
  const refused = await c.post(`/dashboard/webhooks/endpoints/${ep.id}`, { csrf_token: csrf, url: 'ftp://example.com/x' });
  t.equal(refused.status, 400, 'a URL the API refuses is refused here');

  const ask = await c.post(`/dashboard/webhooks/endpoints/${ep.id}/status`, { csrf_token: csrf, status: 'disabled' });
  t.equal(ask.status, 200, 'disabling asks first (no JavaScript)');
  t.match(ask.text, /name="confirmed" value="yes"/);
  t.equal((await h.as(m, 'GET', `/webhook-endpoints/${ep.id}`)).body.status, 'enabled', 'nothing changed before the confirmation');
  t.equal((await c.post(`/dashboard/webhooks/endpoints/${ep.id}/status`, { csrf_token: csrf, status: 'disabled', confirmed: 'yes' })).status, 303);
  t.equal((await h.as(m, 'GET', `/webhook-endpoints/${ep.id}`)).body.status, 'disabled');
  t.equal((await c.post(`/dashboard/webhooks/endpoints/${ep.id}/status`, { csrf_token: csrf, status: 'enabled' })).status, 303, 'enabling needs no confirmation');
  t.equal((await h.as(m, 'GET', `/webhook-endpoints/${ep.id}`)).body.status, 'enabled');

  const rotPage = await c.get('/dashboard/webhooks');
  const rotNonce = FormClient.nonce(rotPage, `/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`)!;
  const rotForm = { csrf_token: csrf, form_nonce: rotNonce, activate_after_seconds: '0' };
  const rotAsk = await c.post(`/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`, rotForm);
  t.equal(rotAsk.status, 200);
  t.equal(FormClient.nonce(rotAsk, `/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`), rotNonce, 'the confirmation carries the form\'s nonce');
  const rotated = await c.post(`/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`, { ...rotForm, confirmed: 'yes' });
  t.equal(rotated.status, 200);
  const newSecret = secretOf(rotated)!;
  t.match(newSecret, /^whsec_/);
  t.not(newSecret, secret);
  t.equal((await c.post(`/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`, { ...rotForm, confirmed: 'yes' })).status, 409, 'rotated once');
  t.equal((await c.submit('/dashboard/webhooks', '/dashboard/webhooks/test')).status, 303, 'a test event');
  const d = await until(() => rx.deliveries.find((x) => x.path.endsWith('?v=2')), 'the test event at the edited URL');
  t.ok(verifyWebhook(d.body, d.headers, newSecret), 'signed with the secret the page showed');

  const staged = await c.post(`/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`,
    { csrf_token: csrf, form_nonce: FormClient.nonce(await c.get('/dashboard/webhooks'), `/dashboard/webhooks/endpoints/${ep.id}/rotate-secret`)!, activate_after_seconds: '86400', confirmed: 'yes' });
  t.equal(staged.status, 200);
  t.match(staged.text, /the current secret keeps signing until/, 'a staged rotation says when the new secret takes over');

  const other = await h.newMerchant('Other');
  const oc = await signedInClient(h, other.merchantId, 'other@example.com');
  const ocsrf = FormClient.csrf(await oc.get('/dashboard/webhooks'));
  t.equal((await oc.post(`/dashboard/webhooks/endpoints/${ep.id}/delete`, { csrf_token: ocsrf, confirmed: 'yes' })).status, 404, "another merchant's endpoint is a 404");
  t.equal((await c.post(`/dashboard/webhooks/endpoints/${ep.id}/delete`, { csrf_token: csrf })).status, 200, 'deleting asks first');
  t.equal((await c.post(`/dashboard/webhooks/endpoints/${ep.id}/delete`, { csrf_token: csrf, confirmed: 'yes' })).status, 303);
  t.same((await h.as(m, 'GET', '/webhook-endpoints')).body.data, [], 'deleted');
});
