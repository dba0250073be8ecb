// Operator API key management (CONTRACT.md §2), the edges: unknown or another merchant's key_id,
// rotating a revoked key, and revoked or expired keys staying refused across a merchant's
// deactivation and reactivation.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { ManualClock } from '../infra/clock.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00Z'));
const h = await startTestApp({ clock });
t.teardown(() => h.stop());

const keyPath = (merchantId: string, keyId: string, action: 'rotate' | 'revoke') => `/admin/merchants/${merchantId}/api-keys/${keyId}/${action}`;
const works = async (m: MerchantCreds) => (await h.as(m, 'GET', '/operators')).status;
const setStatus = async (m: MerchantCreds, status: 'active' | 'inactive') => {
  const r = await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status });
  if (r.status !== 200) throw new Error(`status ${status}: ${r.status}`);
};
const keyStatus = async (m: MerchantCreds, keyId: string) =>
  (await h.admin('GET', `/admin/merchants/${m.merchantId}/api-keys`)).body.data.find((k: any) => k.id === keyId)?.status;

t.test('rotate and revoke: an unknown key, a malformed one, or an unknown merchant → 404 not_found', async (t) => {
  const m = await h.newMerchant('Unknown');
  for (const action of ['rotate', 'revoke'] as const) {
    for (const [what, p] of [
      ['unknown key_id', keyPath(m.merchantId, randomUUID(), action)],
      ['malformed key_id', keyPath(m.merchantId, 'not-a-uuid', action)],
      ['unknown merchant', keyPath(randomUUID(), m.keyId, action)],
    ] as const) {
      const r = await h.admin('POST', p, {});
      t.equal(r.status, 404, `${action}: ${what}`);
      t.equal(r.body.error.code, 'not_found');
    }
  }
  t.equal(await works(m), 200, 'the merchant\'s own key is untouched');
});

t.test('rotate and revoke another merchant\'s key through this merchant → 404, and that key is untouched', async (t) => {
  const a = await h.newMerchant('A');
  const b = await h.newMerchant('B');
  const rotate = await h.admin('POST', keyPath(a.merchantId, b.keyId, 'rotate'), { grace_seconds: 0 });
  t.equal(rotate.status, 404);
  t.equal(rotate.body.error.code, 'not_found');
  t.notOk(rotate.body.api_secret, 'no secret issued');
  const revoke = await h.admin('POST', keyPath(a.merchantId, b.keyId, 'revoke'));
  t.equal(revoke.status, 404);
  t.equal(revoke.body.error.code, 'not_found');
  t.equal(await works(b), 200, 'B\'s key still works with its secret: neither rotated nor revoked');
  t.equal(await keyStatus(b, b.keyId), 'active');
  t.same((await h.admin('GET', `/admin/merchants/${a.merchantId}/api-keys`)).body.data.map((k: any) => k.id), [a.keyId], 'A lists only its own key');
});

t.test('rotating a revoked key is 400 bad_request; no secret is issued and the key stays refused', async (t) => {
  const m = await h.newMerchant('Revoked');
  t.equal((await h.admin('POST', keyPath(m.merchantId, m.keyId, 'revoke'))).status, 200);
  const r = await h.admin('POST', keyPath(m.merchantId, m.keyId, 'rotate'), { grace_seconds: 60 });
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'bad_request');
  t.match(r.body.error.message, /revoked/);
  t.notOk(r.body.api_secret);
  t.equal(await works(m), 401);
  const again = await h.admin('POST', keyPath(m.merchantId, m.keyId, 'revoke'));
  t.equal(again.status, 200, 'revoking twice is harmless');
  t.equal(again.body.status, 'revoked');
});

t.test('a revoked key stays 401 after its merchant goes inactive and active again; its other key works', async (t) => {
  const m = await h.newMerchant('Cycle');
  const k2 = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, {});
  const other: MerchantCreds = { ...m, keyId: k2.body.id, apiKey: k2.body.api_key, apiSecret: k2.body.api_secret };
  t.equal((await h.admin('POST', keyPath(m.merchantId, m.keyId, 'revoke'))).status, 200);
  t.equal(await works(m), 401);
  await setStatus(m, 'inactive');
  t.equal(await works(m), 401);
  t.equal(await works(other), 401, 'inactive: every key refused');
  await setStatus(m, 'active');
  t.equal(await works(other), 200, 'active again: the unrevoked key works');
  t.equal(await works(m), 401, 'the revoked key does not come back');
  t.equal(await keyStatus(m, m.keyId), 'revoked');
});

t.test('an expired key is 401, listed as expired, and neither reactivation nor rotation brings it back', async (t) => {
  const m = await h.newMerchant('Expiry');
  const k = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, { expires_at: new Date(clock.now().getTime() + 60_000).toISOString() });
  t.equal(k.status, 201);
  t.equal(k.body.status, 'active');
  const expiring: MerchantCreds = { ...m, keyId: k.body.id, apiKey: k.body.api_key, apiSecret: k.body.api_secret };
  t.equal(await works(expiring), 200);
  clock.advance(60_000);
  const r = await h.as(expiring, 'GET', '/operators');
  t.equal(r.status, 401, 'at expires_at the key is refused');
  t.equal(r.body.error.code, 'unauthorized');
  t.equal(await keyStatus(m, expiring.keyId), 'expired');
  t.equal(await works(m), 200, 'the key without expiry still works');
  await setStatus(m, 'inactive');
  await setStatus(m, 'active');
  t.equal(await works(expiring), 401, 'still expired after reactivation');
  const rotated = await h.admin('POST', keyPath(m.merchantId, expiring.keyId, 'rotate'), {});
  t.equal(rotated.status, 201, 'rotation is allowed (it changes the secret, not the expiry)');
  t.equal(await works({ ...expiring, apiSecret: rotated.body.api_secret }), 401, 'the new secret does not extend the expiry');
  t.equal(await keyStatus(m, expiring.keyId), 'expired');
});
