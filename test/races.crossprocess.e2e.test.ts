// Races between two service instances on one PostgreSQL database, each with its own connection
// pool and its own in-process locks and caches: only the event store's expected-version check
// stands between them. 20 payouts against one wallet (no overdraft, exact success count), and one
// quote raced by both (exactly one payment).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds, type TestApp } from './helpers/app.ts';
import { leg, quote, topUp, wallet } from './helpers/money.ts';

{
  const h = await startTestApp();
  // The second instance: same database and keys, its own pool, aggregates cache and locks.
  const second: RunningApp = await startApp({
    config: { ...loadConfig({ ADMIN_TOKEN, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent', SANDBOX_SETTLE_MS: '50', ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' }, []), databaseUrl: h.database.url },
    log: createLogger('silent'),
    port: 0,
  });
  t.teardown(async () => {
    await second.stop();
    await h.stop();
  });
  await races(h, second.url!);
}

async function races(h: TestApp, secondUrl: string): Promise<void> {
  const on = (m: MerchantCreds, i: number, method: string, p: string, body?: unknown) =>
    request(i % 2 === 0 ? h.url : secondUrl, method, p, {
      body, headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret, 'idempotency-key': randomBytes(8).toString('hex') },
    });
  const recipient = (phone: string) => ({ country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual', first_name: 'A', last_name: 'B' });

  async function setup() {
    const m = await h.newMerchant('Races');
    const c = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: true });
    return { m, customer: c.body.id as string };
  }

  t.test('20 payouts through two instances against a balance covering 7: exactly 7 succeed', async (t) => {
    const { m, customer } = await setup();
    await topUp(h, m, 'XOF', '7500');
    const quotes = await Promise.all(Array.from({ length: 20 }, () => quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'))));
    const answers = await Promise.all(quotes.map((q, i) => on(m, i, 'POST', '/payouts', {
      quote_id: q.id, customer_id: customer, payment_reason_text: 'race', recipient: recipient('+221770000098'),
    })));
    t.same(answers.filter((a) => a.status >= 500).map((a) => a.text), [], 'no 5xx: version conflicts are retried');
    t.equal(answers.filter((a) => a.status === 201).length, 7, 'exactly 7 succeed');
    t.equal(answers.filter((a) => a.status === 400 && a.body.error.code === 'insufficient_balance').length, 13, 'the rest are refused');
    t.match(await wallet(h, m, 'XOF'), { available: '500', reserved: '7000' }, 'nothing overdrawn');
    const w = await wallet(h, m, 'XOF');
    t.comment(`races: 20 concurrent payouts through 2 instances on a wallet of 7x: ${answers.filter((a) => a.status === 201).length} succeeded, ${answers.filter((a) => a.status === 400).length} insufficient_balance, 5xx=${answers.filter((a) => a.status >= 500).length}, available=${w.available}`);
  });

  t.test('one quote, ten payins through two instances: exactly one', async (t) => {
    const { m, customer } = await setup();
    const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => on(m, i, 'POST', '/payins', {
      quote_id: q.id, customer_id: customer, source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' },
    })));
    t.same(answers.filter((a) => a.status >= 500).map((a) => a.text), [], 'no 5xx');
    t.equal(answers.filter((a) => a.status === 201).length, 1, 'one payin');
    t.ok(answers.filter((a) => a.status !== 201).every((a) => a.status === 400 && a.body.error.code === 'quote_not_active'), 'the others: quote_not_active');
    t.comment(`races: 10 payins on one quote through 2 instances: ${answers.filter((a) => a.status === 201).length} created, ${answers.filter((a) => a.status === 400).length} quote_not_active`);
  });
}
