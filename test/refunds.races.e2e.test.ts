// Refunds under concurrency (CONTRACT §9, issue 33 point 1): 20 refunds of one payin at once never
// refund more than its send_amount (the payin's stream serializes them: exactly the expected number
// succeed), also through two service instances on one database (only the payin's expected version
// stands between them), and refunds racing payouts on one wallet never take available below zero.
// Runs on the embedded PostgreSQL (npm test) and on the external PostgreSQL and NATS
// (npm run test:services).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds } from './helpers/app.ts';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { dbLabel } from './helpers/db.ts';
import { leg, newCustomer, party, quote, settled, topUp, until, wallet } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

async function completedPayin(m: MerchantCreds, amount = '5000'): Promise<any> {
  const customer = await newCustomer(h, m, 'CM', '+237670000001');
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', amount));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  return settled(h, m, 'payins', p.body.id, 'completed');
}

const terminal = (m: MerchantCreds, ids: string[]) => until('refunds terminal', async () => {
  const r = await h.as(m, 'GET', '/refunds?limit=100');
  const mine = r.body.data.filter((x: any) => ids.includes(x.id));
  return mine.length === ids.length && mine.every((x: any) => x.status === 'completed' || x.status === 'failed') ? mine : undefined;
});

const audit = async () => {
  const r = await h.admin('POST', '/admin/audit');
  if (r.status !== 200) throw new Error(`audit: ${r.status} ${r.text}`);
  return r.body;
};

t.test(`20 refunds of one payin at once: exactly 5 of 1000 succeed, never more than send_amount (${dbLabel})`, async (t) => {
  const m = await h.newMerchant();
  await topUp(h, m, 'XAF', '100000');
  const p = await completedPayin(m);
  const answers = await Promise.all(Array.from({ length: 20 }, () => h.as(m, 'POST', '/refunds', { payin_id: p.id, amount: '1000' }, { idem: true })));
  const ok = answers.filter((r) => r.status === 201);
  t.equal(ok.length, 5, 'exactly send_amount / amount refunds are created');
  t.same([...new Set(answers.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.body.error?.code}`))], ['400 refund_exceeds_payin'], 'the others are refused');
  t.match(await wallet(h, m, 'XAF'), { available: '99925' }, 'five holds, no more (some may have completed already)');
  const done = await terminal(m, ok.map((r) => r.body.id));
  const nonFailed = done.filter((x: any) => x.status !== 'failed').reduce((a: bigint, x: any) => a + BigInt(x.amount), 0n);
  t.ok(nonFailed <= 5000n, `non-failed refunds sum to ${nonFailed}, at most send_amount`);
  t.match((await h.as(m, 'GET', `/payins/${p.id}`)).body, { refunded_amount: '5000' });
  t.equal((await h.as(m, 'GET', `/payins/${p.id}`)).body.refund_ids.length, 5);
  t.match(await wallet(h, m, 'XAF'), { available: '99925', reserved: '0' });

  // With the default amount (what is left), 20 at once: exactly one takes it all.
  const q = await completedPayin(m, '3000');
  const all = await Promise.all(Array.from({ length: 20 }, () => h.as(m, 'POST', '/refunds', { payin_id: q.id }, { idem: true })));
  const won = all.filter((r) => r.status === 201);
  t.equal(won.length, 1, 'one full refund');
  t.equal(won[0]!.body.amount, '3000');
  await terminal(m, [won[0]!.body.id]);
});

t.test(`refunds racing payouts on one wallet never take available below zero (${dbLabel})`, async (t) => {
  const m = await h.newMerchant();
  const p = await completedPayin(m, '10000'); // available: the payin's net, 9850 at 1.5%
  const start = await wallet(h, m, 'XAF');
  const available = BigInt(start.available);
  const customer = await newCustomer(h, m, 'CM', '+237670000002');
  const quotes = await Promise.all(Array.from({ length: 6 }, () => quote(h, m, 'payout', leg('CM_MTN_MOMO', 'CM', 'XAF', '1500'))));
  const payouts = quotes.map((q) => h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: customer, payment_reason_text: 'Supplier', recipient: { ...party('CM', 'CM_MTN_MOMO', '+237670000002'), recipient_type: 'individual', first_name: 'Ama', last_name: 'Test' },
  }, { idem: true }));
  const refunds = Array.from({ length: 8 }, () => h.as(m, 'POST', '/refunds', { payin_id: p.id, amount: '1000' }, { idem: true }));
  const [outs, backs] = await Promise.all([Promise.all(payouts), Promise.all(refunds)]);
  const held = outs.filter((r) => r.status === 201).length * 1500 + backs.filter((r) => r.status === 201).length * 1000;
  for (const r of [...outs, ...backs]) {
    if (r.status !== 201) t.equal(r.body.error?.code, 'insufficient_balance', `refused only for the balance: ${r.text}`);
  }
  t.ok(outs.some((r) => r.status !== 201) || backs.some((r) => r.status !== 201), 'the wallet could not cover them all');
  t.ok(BigInt(held) <= available, `held ${held} of ${available}`);
  const w = await wallet(h, m, 'XAF');
  t.equal(BigInt(w.available), available - BigInt(held), 'available less exactly what was held');
  t.ok(BigInt(w.available) >= 0n);
  const ids = backs.filter((r) => r.status === 201).map((r) => r.body.id);
  await terminal(m, ids);
  for (const r of outs.filter((x) => x.status === 201)) await settled(h, m, 'payouts', r.body.id);
  const report = await audit();
  t.equal(report.ok, true, 'the finance audit passes');
  t.same(report.ledger.findings, []);
  const negative = await s.knex('wallets').where('available', '<', 0).orWhere('reserved', '<', 0);
  t.same(negative, []);
});

t.test(`20 refunds of one payin through two instances on one database: exactly 5 succeed (${dbLabel})`, async (t) => {
  // The second instance: same database and keys, its own pool, aggregates cache and locks.
  const second = await startApp({
    config: {
      ...loadConfig({ ADMIN_TOKEN, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent', SANDBOX_SETTLE_MS: '50', ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' }, []),
      databaseUrl: h.database.url,
    },
    log: createLogger('silent'),
    port: 0,
  });
  t.teardown(() => second.stop());
  const m = await h.newMerchant();
  await topUp(h, m, 'XAF', '100000');
  const p = await completedPayin(m);
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => request(i % 2 === 0 ? h.url : second.url!, 'POST', '/refunds', {
    body: { payin_id: p.id, amount: '1000' },
    headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret, 'idempotency-key': randomBytes(8).toString('hex') },
  })));
  t.same(answers.filter((a) => a.status >= 500).map((a) => a.text), [], 'no 5xx: version conflicts are decided again');
  const ok = answers.filter((r) => r.status === 201);
  t.equal(ok.length, 5, 'exactly 5 succeed');
  t.equal(answers.filter((r) => r.status === 400 && r.body.error.code === 'refund_exceeds_payin').length, 15, 'the rest are refused');
  t.match(await wallet(h, m, 'XAF'), { available: '99925' }, 'five holds, no more');
  await terminal(m, ok.map((r) => r.body.id));
  t.match((await h.as(m, 'GET', `/payins/${p.id}`)).body, { refunded_amount: '5000' });
  const events = await s.store.readStream(`payin-${p.id}`, 1);
  t.equal(events.filter((e) => e.type === 'payin.refund_claimed').length, 5, 'five claims on the payin\'s stream');
});
