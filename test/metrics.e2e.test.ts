// GET /metrics (issue 10, point 5): Prometheus text from prom-client, behind the operator token.
// Scrapes before and after doing things and checks that the series move: HTTP requests by route
// template and status, projection lag, bus consumer backlog, webhook attempts by outcome, provider
// call and leg latency, jobs.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startTestApp, request, ADMIN_TOKEN } from './helpers/app.ts';
import { parseMetrics, series } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { startReceiver } from './helpers/webhooks.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30', WEBHOOK_RETRY_SCHEDULE: '60' } });
t.teardown(() => h.stop());
const s = h.app.services;

const scrape = async () => {
  const r = await h.admin('GET', '/metrics');
  if (r.status !== 200) throw new Error(`metrics: ${r.status} ${r.text}`);
  return parseMetrics(r.text);
};
const value = (m: Map<string, number>, name: string, labels: Record<string, string> = {}) => m.get(series(name, labels)) ?? 0;

t.test('who may read it: the operator token; Prometheus text format', async (t) => {
  t.equal((await request(h.url, 'GET', '/metrics')).status, 401, 'no token');
  t.equal((await request(h.url, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 401, 'wrong token');
  const m = await h.newMerchant('Scraper');
  t.equal((await h.as(m, 'GET', '/metrics')).status, 401, 'merchant credentials are not enough');
  const r = await request(h.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4; charset=utf-8/);
  t.match(r.text, /# HELP http_requests_total HTTP requests answered/);
  t.match(r.text, /# TYPE http_request_duration_seconds histogram/);
  t.match(r.text, /process_cpu_user_seconds_total/, 'process metrics too');
  t.notOk(/merchant_id|customer_id|payin_id/.test(r.text.split('\n').filter((l) => !l.startsWith('#')).join('\n').replace(/route="[^"]*"/g, '')),
    'no merchant, customer or payment id in any label value other than route templates');
});

t.test('HTTP: requests and latency by method, route template and status', async (t) => {
  const m = await h.newMerchant('Http');
  const before = await scrape();
  const id = randomUUID();
  for (let i = 0; i < 3; i++) await h.as(m, 'GET', `/payins/${id}`);
  await h.as(m, 'GET', '/wallets');
  await request(h.url, 'GET', '/wallets');
  await request(h.url, 'GET', '/no/such/route');
  const after = await scrape();
  const d = (labels: Record<string, string>) => value(after, 'http_requests_total', labels) - value(before, 'http_requests_total', labels);
  t.equal(d({ method: 'GET', route: '/payins/{payin_id}', status: '404' }), 3, 'by template, never by concrete path');
  t.equal(d({ method: 'GET', route: '/wallets', status: '200' }), 1);
  t.equal(d({ method: 'GET', route: '/wallets', status: '401' }), 1);
  t.equal(d({ method: 'GET', route: 'unmatched', status: '404' }), 1);
  t.notOk([...after.keys()].some((k) => k.includes(id)), 'the concrete id is in no series');
  const count = (m: Map<string, number>) => value(m, 'http_request_duration_seconds_count', { method: 'GET', route: '/payins/{payin_id}', status: '404' });
  t.equal(count(after) - count(before), 3, 'latency observed for each');
  t.ok(value(after, 'http_request_duration_seconds_sum', { method: 'GET', route: '/payins/{payin_id}', status: '404' }) > 0);
  t.ok(value(after, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' }) >= 1, 'scrapes are counted too');
});

t.test('projection lag: grows while the projector is stopped, back to 0 once it runs', async (t) => {
  await s.awaitReadModels(await s.store.head());
  const zero = await scrape();
  for (const p of ['merchants', 'customers', 'money', 'transfers']) t.equal(value(zero, 'projection_lag_events', { projection: p }), 0, `${p}: no lag`);
  t.equal(value(zero, 'event_store_head_position'), Number(await s.store.head()));
  await s.projector.stop();
  try {
    await s.store.append([{ streamId: `metrics-${randomUUID()}`, expectedVersion: 0, events: [{ type: 'metrics.test', data: {} }, { type: 'metrics.test', data: {} }] }]);
    const lagging = await scrape();
    t.equal(value(lagging, 'projection_lag_events', { projection: 'money' }), 2, 'two events behind');
    t.equal(value(lagging, 'projection_checkpoint_position', { projection: 'money' }), value(zero, 'event_store_head_position'));
  } finally {
    await s.projector.start();
  }
  await s.awaitReadModels(await s.store.head());
  t.equal(value(await scrape(), 'projection_lag_events', { projection: 'money' }), 0, 'caught up');
  const forwarded = await until('forwarder caught up', async () => {
    const m = await scrape();
    return value(m, 'event_forwarder_lag_events') === 0 ? m : undefined;
  });
  t.ok(forwarded.has(series('event_forwarder_lag_events')));
});

t.test('bus consumer backlog (in-process bus: pending counts per durable)', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const consumer = await s.bus.consume({ durable: 'metrics-test', subjects: ['metrics.backlog'], concurrency: 1, handler: () => gate });
  try {
    for (let i = 0; i < 3; i++) await s.bus.publish('metrics.backlog', randomUUID(), { i });
    t.equal(value(await scrape(), 'bus_consumer_pending_messages', { durable: 'metrics-test' }), 3, 'one in flight, two queued');
    t.ok((await scrape()).has(series('bus_consumer_pending_messages', { durable: 'provider-gateway' })), 'the service\'s consumers are listed');
    release();
    await until('backlog drained', async () => value(await scrape(), 'bus_consumer_pending_messages', { durable: 'metrics-test' }) === 0);
  } finally {
    release();
    await consumer.stop();
  }
});

t.test('webhooks by outcome, provider calls and leg latency, jobs', async (t) => {
  const receiver = await startReceiver((d) => ({ status: d.n === 1 ? 500 : 200 }));
  t.teardown(() => receiver.close());
  const before = await scrape();
  const m = await h.newMerchant('Hooks');
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: receiver.url });
  const customer = await newCustomer(h, m);
  const pay = async (phone: string) => {
    const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('CM_MTN_MOMO', 'CM', 'XAF', '1000') });
    const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
    return settled(h, m, 'payins', p.body.id);
  };
  await pay('+237670000001');
  await pay('+237670000099');
  // First delivery answered 500 (http_error), then 200 (delivered) for the second event; retry later.
  const after = await until('two webhook attempts', async () => {
    const x = await scrape();
    const n = ['http_error', 'delivered'].reduce((a, o) => a + value(x, 'webhook_delivery_attempts_total', { outcome: o, trigger: 'scheduled' })
      - value(before, 'webhook_delivery_attempts_total', { outcome: o, trigger: 'scheduled' }), 0);
    return n >= 2 ? x : undefined;
  });
  const d = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
  t.equal(d('webhook_delivery_attempts_total', { outcome: 'http_error', trigger: 'scheduled' }), 1);
  t.equal(d('webhook_delivery_attempts_total', { outcome: 'delivered', trigger: 'scheduled' }), 1);

  t.equal(d('provider_request_duration_seconds_count', { provider: 'sandbox', operation: 'initiate', outcome: 'ok' }), 2, 'one initiate per leg');
  t.ok(d('provider_request_duration_seconds_count', { provider: 'sandbox', operation: 'status', outcome: 'ok' }) >= 2, 'status checks');
  t.equal(d('provider_leg_settle_seconds_count', { provider: 'sandbox', kind: 'collection', outcome: 'completed' }), 1);
  t.equal(d('provider_leg_settle_seconds_count', { provider: 'sandbox', kind: 'collection', outcome: 'failed' }), 1);
  t.ok(d('provider_leg_settle_seconds_sum', { provider: 'sandbox', kind: 'collection', outcome: 'completed' }) > 0, 'a latency, in seconds');
  t.ok([...after.keys()].some((k) => k.startsWith('scheduler_jobs{')), 'job gauges');
  t.equal(value(after, 'metrics_source_errors_total', { source: 'projections' }), 0, 'no state source failed');
});
