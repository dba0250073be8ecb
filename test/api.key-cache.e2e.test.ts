// API keys are cached in memory (bench issue 8) but stay exactly as fresh as the read model: a
// revocation through one instance is refused by another instance that had the key cached, once its
// projector has the event (well before the cache's 10 s age limit), and a row read while the cache
// was cleared is not kept.
import t from 'tap';
import { MerchantRowCache, KEY_CACHE_MAX_AGE_MS } from '../projections/merchant-row-cache.ts';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { startTestApp, request, ADMIN_TOKEN } from './helpers/app.ts';
import { waitUntil } from './helpers/wait.ts';

t.test('MerchantRowCache: a row read across a clear is not kept; rows age out', async (t) => {
  const c = new MerchantRowCache<string>(1000);
  const g = c.generation();
  c.clear(); // a revocation lands while the row is being read
  c.set('k', 'old row', g, 0);
  t.equal(c.get('k', 0), undefined, 'the possibly stale row was not cached');
  c.set('k', 'row', c.generation(), 0);
  t.equal(c.get('k', 999), 'row');
  t.equal(c.get('k', 1001), undefined, 'past its age');
  t.ok(KEY_CACHE_MAX_AGE_MS >= 5000, 'the age limit is a backstop, not the invalidation');
});

t.test('same instance: a revoked key is refused on the next request', async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const m = await h.newMerchant('Key cache');
  t.equal((await h.as(m, 'GET', '/operators')).status, 200, 'authenticated (and cached)');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/revoke`)).status, 200);
  t.equal((await h.as(m, 'GET', '/operators')).status, 401, 'refused at once');
});

{
  t.test('another instance: a key it has cached is refused soon after the revocation', async (t) => {
    const h = await startTestApp();
    const second: RunningApp = await startApp({
      config: { ...loadConfig({ ADMIN_TOKEN, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent' }, []), databaseUrl: h.database.url },
      log: createLogger('silent'),
      port: 0,
    });
    t.teardown(async () => { await second.stop(); await h.stop(); });
    const m = await h.newMerchant('Key cache, two instances');
    const onSecond = () => request(second.url!, 'GET', '/operators', { headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret } });
    t.equal((await onSecond()).status, 200, 'the second instance authenticates (and caches) the key');
    t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/revoke`)).status, 200, 'revoked through the first');
    const revokedAt = Date.now();
    await waitUntil('the instance that had the key cached to refuse it', async () => (await onSecond()).status === 401);
    const ms = Date.now() - revokedAt;
    t.equal((await onSecond()).status, 401, 'refused by the instance that had it cached');
    // The age limit would refuse it only 10 s after it was cached: sooner, the read model did.
    t.ok(ms < KEY_CACHE_MAX_AGE_MS, `refused ${ms} ms after the revocation (the cache follows the read model, not its age limit)`);
  });
}
