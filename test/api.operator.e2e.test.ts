// Operator API (CONTRACT.md §2) and merchant authentication (issue 2, points 5 and 6).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, request, ADMIN_TOKEN } from './helpers/app.ts';
import { ManualClock } from '../infra/clock.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00Z'));
const h = await startTestApp({ clock });
t.teardown(() => h.stop());

t.test('operator calls need the bearer token', async (t) => {
  const none = await request(h.url, 'POST', '/admin/merchants', { body: { name: 'x' } });
  t.equal(none.status, 401);
  t.equal(none.body.error.code, 'unauthorized');
  const wrong = await request(h.url, 'POST', '/admin/merchants', { body: { name: 'x' }, headers: { authorization: 'Bearer nope' } });
  t.equal(wrong.status, 401);
  t.ok(none.headers.get('x-request-id'), 'every response carries X-Request-Id');
});

t.test('create and read a merchant with default routing and pricing', async (t) => {
  const created = await h.admin('POST', '/admin/merchants', { name: 'Acme' });
  t.equal(created.status, 201);
  t.match(created.body, { id: String, name: 'Acme', status: 'active', created_at: String });
  const got = await h.admin('GET', `/admin/merchants/${created.body.id}`);
  t.equal(got.status, 200);
  t.same(got.body.pricing, { payin: { percent: '1.5', fixed: '0' }, payout: { percent: '1', fixed: '0' }, transfer: { percent: '2', fixed: '0' } });
  t.equal(got.body.routing.payin_operators.length, 13, 'every sandbox operator enabled for payins');
  t.same(got.body.routing.corridors, [], 'no transfer corridor');
  t.equal(got.body.webhook_url, null);
  t.equal((await h.admin('GET', '/admin/merchants/00000000-0000-4000-8000-000000000000')).status, 404);
  t.equal((await h.admin('GET', '/admin/merchants/not-a-uuid')).status, 404);
});

t.test('keys: create, authenticate, list without secrets, rotate with grace, revoke, expiry', async (t) => {
  const m = await h.newMerchant('Keys');
  const ok = await h.as(m, 'GET', '/operators');
  t.equal(ok.status, 200, 'a fresh key authenticates');

  const list = await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`);
  t.equal(list.status, 200);
  t.equal(list.body.data.length, 1);
  t.notOk('api_secret' in list.body.data[0], 'no secret in the list');
  t.notOk(JSON.stringify(list.body).includes(m.apiSecret));

  const rotated = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/rotate`, { grace_seconds: 60 });
  t.equal(rotated.status, 201);
  t.equal(rotated.body.api_key, m.apiKey, 'same key');
  t.not(rotated.body.api_secret, m.apiSecret, 'new secret');
  t.equal((await h.as(m, 'GET', '/operators')).status, 200, 'old secret works during the grace period');
  const fresh = { ...m, apiSecret: rotated.body.api_secret };
  t.equal((await h.as(fresh, 'GET', '/operators')).status, 200, 'new secret works');
  clock.advance(61_000);
  t.equal((await h.as(m, 'GET', '/operators')).status, 401, 'old secret stops after the grace period');
  t.equal((await h.as(fresh, 'GET', '/operators')).status, 200);

  const noGrace = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/rotate`, {});
  t.equal((await h.as(fresh, 'GET', '/operators')).status, 401, 'grace 0: the old secret stops at once');
  const latest = { ...m, apiSecret: noGrace.body.api_secret };

  const revoked = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/revoke`);
  t.equal(revoked.status, 200);
  t.equal(revoked.body.status, 'revoked');
  t.equal((await h.as(latest, 'GET', '/operators')).status, 401, 'revoked key gets 401');

  const expiring = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, { expires_at: new Date(clock.now().getTime() + 1000).toISOString() });
  t.equal(expiring.status, 201);
  const e = { ...m, apiKey: expiring.body.api_key, apiSecret: expiring.body.api_secret };
  t.equal((await h.as(e, 'GET', '/operators')).status, 200);
  clock.advance(2000);
  const expired = await h.as(e, 'GET', '/operators');
  t.equal(expired.status, 401, 'expired key gets 401');
  const past = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, { expires_at: '2000-01-01T00:00:00Z' });
  t.equal(past.status, 400, 'an expiry in the past is refused');
});

t.test('401s give no hint which check failed', async (t) => {
  const m = await h.newMerchant('Hints');
  const answers = [
    await request(h.url, 'GET', '/operators'),
    await h.as({ ...m, apiKey: 'pk_unknown' }, 'GET', '/operators'),
    await h.as({ ...m, apiSecret: 'sk_wrong' }, 'GET', '/operators'),
    await h.as({ ...m, apiSecret: '' }, 'GET', '/operators'),
  ];
  for (const a of answers) {
    t.equal(a.status, 401);
    t.same({ code: a.body.error.code, message: a.body.error.message }, { code: 'unauthorized', message: answers[0]!.body.error.message });
  }
});

t.test('inactive merchant: its keys get 401, and work again when reactivated', async (t) => {
  const m = await h.newMerchant('Status');
  const off = await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'inactive' });
  t.equal(off.status, 200);
  t.equal(off.body.status, 'inactive');
  t.equal((await h.as(m, 'GET', '/operators')).status, 401);
  await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'active' });
  t.equal((await h.as(m, 'GET', '/operators')).status, 200);
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'paused' })).status, 400);
});

t.test('webhook URL: a new signing secret each call, never shown again', async (t) => {
  const m = await h.newMerchant('Hooks');
  const a = await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: 'https://example.com/hooks' });
  t.equal(a.status, 200);
  t.match(a.body, { url: 'https://example.com/hooks', signing_secret: /^whsec_/ });
  const b = await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: 'https://example.com/hooks' });
  t.not(b.body.signing_secret, a.body.signing_secret);
  const got = await h.admin('GET', `/admin/merchants/${m.merchantId}`);
  t.equal(got.body.webhook_url, 'https://example.com/hooks');
  t.notOk(JSON.stringify(got.body).includes(b.body.signing_secret), 'the secret is not readable');
  t.equal((await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: 'not a url' })).status, 400);
});

t.test('routing and pricing', async (t) => {
  const m = await h.newMerchant('Routing');
  const r = await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { payin_operators: ['CM_MTN_MOMO'], corridors: ['CM-SN-XAF-XOF'] });
  t.equal(r.status, 200);
  t.same(r.body.payin_operators, ['CM_MTN_MOMO']);
  t.same(r.body.corridors, ['CM-SN-XAF-XOF']);
  t.equal(r.body.payout_operators.length, 13, 'unchanged lists stay');
  const bad = await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: ['CM-SN-XOF-XOF'] });
  t.equal(bad.status, 400, 'a corridor whose currencies do not match its countries is refused');
  t.equal((await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { payin_operators: ['XX_FAKE_MOMO'] })).status, 400);
  const p = await h.admin('PUT', `/admin/merchants/${m.merchantId}/pricing`, { payin: { percent: '2.25', fixed: '50' } });
  t.equal(p.status, 200);
  t.same(p.body.payin, { percent: '2.25', fixed: '50' });
  t.same(p.body.payout, { percent: '1', fixed: '0' });
  t.equal((await h.admin('PUT', `/admin/merchants/${m.merchantId}/pricing`, { payin: { percent: 2, fixed: '0' } })).status, 400, 'numbers are not coerced');
  t.equal((await h.admin('PUT', `/admin/merchants/${m.merchantId}/pricing`, { payin: { percent: '101', fixed: '0' } })).status, 400);
});

t.test('operator token is not accepted on the merchant API and vice versa', async (t) => {
  const m = await h.newMerchant('Cross');
  t.equal((await request(h.url, 'GET', '/operators', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 401);
  t.equal((await h.as(m, 'GET', `/admin/merchants/${m.merchantId}`)).status, 401);
});

t.test('GET /operators reflects the merchant routing', async (t) => {
  const m = await h.newMerchant('Ops');
  const all = await h.as(m, 'GET', '/operators');
  t.equal(all.status, 200);
  t.equal(all.body.data.length, 13);
  const orange = all.body.data.find((o: any) => o.operator_code === 'SN_ORANGE_MOMO');
  t.match(orange, { country_code: 'SN', currency: 'XOF', requires_otp: true, min_amount: '100', max_amount: '1000000', availability: { payin: 'operational', payout: 'operational' } });
  t.same(orange.flows, ['payin', 'payout']);
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { payin_operators: ['CM_MTN_MOMO'], payout_operators: [], corridors: ['CM-SN-XAF-XOF'] });
  const some = await h.as(m, 'GET', '/operators');
  const codes = some.body.data.map((o: any) => o.operator_code).sort();
  t.same(codes, ['CM_MTN_MOMO', 'CM_ORANGE_MOMO', 'SN_FREE_MOMO', 'SN_ORANGE_MOMO', 'SN_WAVE_MOMO']);
  t.same(some.body.data.find((o: any) => o.operator_code === 'CM_MTN_MOMO').flows, ['payin', 'transfer']);
});

t.test('a top-up in a currency that is not offered is a 400 naming it, not a 404 (issue 31)', async (t) => {
  const m = await h.newMerchant('TopUpCurrency');
  for (const currency of ['xof', 'EUR']) {
    const r = await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/${currency}/top-ups`, { amount: '5000' });
    t.equal(r.status, 400, currency);
    t.equal(r.body.error.code, 'bad_request');
    t.same(r.body.error.details, [{ field: 'path.currency', message: 'must be one of: XAF, XOF' }], `${currency}: the field and what it accepts`);
    t.match(r.body.error.message, /currency/);
  }
  const ok = await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XOF/top-ups`, { amount: '5000' });
  t.equal(ok.status, 201, 'XOF is accepted');
  const noMerchant = await h.admin('POST', '/admin/merchants/not-a-uuid/wallets/XOF/top-ups', { amount: '5000' });
  t.equal(noMerchant.status, 404, 'a malformed merchant id still names nothing');
});

t.test('corridors: the operator adds or removes one, the merchant sees them in GET /corridors (issue 31)', async (t) => {
  const m = await h.newMerchant('Corridors');
  const path = (code: string) => `/admin/merchants/${m.merchantId}/corridors/${code}`;
  const quote = () => h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_amount: '10000', payin_currency: 'XAF', payout_currency: 'XOF',
  }, { idem: true });
  t.same((await h.as(m, 'GET', '/corridors')).body, { data: [] }, 'a new merchant has none');
  t.equal((await quote()).body.error.code, 'corridor_not_configured');

  const added = await h.admin('PUT', path('CM-SN-XAF-XOF'), undefined);
  t.equal(added.status, 200);
  t.same(added.body.corridors, ['CM-SN-XAF-XOF']);
  t.equal(added.body.payin_operators.length, 13, 'the rest of the routing stays');
  t.same((await h.admin('PUT', path('SN-CI-XOF-XOF'), undefined)).body.corridors, ['CM-SN-XAF-XOF', 'SN-CI-XOF-XOF']);
  const stream = () => h.app.services.store.readStream(`merchant-${m.merchantId}`, 1);
  const before = (await stream()).length;
  const again = await h.admin('PUT', path('CM-SN-XAF-XOF'), undefined);
  t.equal(again.status, 200, 'idempotent');
  t.same(again.body.corridors, ['CM-SN-XAF-XOF', 'SN-CI-XOF-XOF']);
  t.equal((await stream()).length, before, 'no event for a corridor already enabled');

  const seen = await h.as(m, 'GET', '/corridors');
  t.equal(seen.status, 200);
  t.same(seen.body.data.map((c: any) => c.corridor_code), ['CM-SN-XAF-XOF', 'SN-CI-XOF-XOF']);
  t.match(seen.body.data[0], {
    payer_country_code: 'CM', payer_currency: 'XAF', recipient_country_code: 'SN', recipient_currency: 'XOF',
    payer_operators: ['CM_MTN_MOMO', 'CM_ORANGE_MOMO'],
  });
  t.ok(seen.body.data[0].recipient_operators.includes('SN_WAVE_MOMO'));
  t.equal((await quote()).status, 201, 'a transfer quote on it works');

  const removed = await h.admin('DELETE', path('CM-SN-XAF-XOF'), undefined);
  t.equal(removed.status, 200);
  t.same(removed.body.corridors, ['SN-CI-XOF-XOF']);
  t.same((await h.admin('DELETE', path('CM-SN-XAF-XOF'), undefined)).body.corridors, ['SN-CI-XOF-XOF'], 'removing it again: the same answer');
  t.same((await h.admin('GET', `/admin/merchants/${m.merchantId}`)).body.routing.corridors, ['SN-CI-XOF-XOF'], 'the read model follows');
  t.equal((await quote()).body.error.code, 'corridor_not_configured', 'removed: quotes refused again');

  const unknown = await h.admin('PUT', path('CM-SN-XOF-XOF'), undefined);
  t.equal(unknown.status, 400, 'currencies that do not match the countries');
  t.same(unknown.body.error.details.map((d: any) => d.field), ['corridor_code']);
  const malformed = await h.admin('PUT', path('cm-sn'), undefined);
  t.equal(malformed.status, 400);
  t.same(malformed.body.error.details.map((d: any) => d.field), ['path.corridor_code']);
  t.equal((await h.admin('PUT', `/admin/merchants/${randomUUID()}/corridors/CM-SN-XAF-XOF`, undefined)).status, 404);
  const doc = (await request(h.url, 'GET', '/openapi.json')).body;
  t.ok(doc.paths['/admin/merchants/{merchant_id}/corridors/{corridor_code}'].put && doc.paths['/admin/merchants/{merchant_id}/corridors/{corridor_code}'].delete, 'documented');
  t.ok(doc.paths['/corridors'].get, 'documented');
});
