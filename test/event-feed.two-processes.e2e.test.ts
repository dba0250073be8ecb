// The event feed with several processes on one database (CONTRACT.md §12): an API-only process
// (no workers: it records no webhook event itself) streams the events the other process records;
// a client that reconnects at random moments (seeded), to either process, with Last-Event-ID, ends
// with exactly GET /events?order=asc; stopping a process ends its open streams. On the in-process bus
// and, in the services lane (NATS_URL), on NATS.
import t from 'tap';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { randomUUID } from 'node:crypto';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds, type TestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { flakyFeedClient, openSse } from './helpers/sse.ts';

const env = { EVENT_STREAM_POLL_MS: '300', EVENT_STREAM_HEARTBEAT_MS: '1000', EVENT_STREAMS_PER_MERCHANT: '3' };
const h = await startTestApp({ env });
const nats = h.natsPrefix ? { NATS_URL: process.env.NATS_URL!, NATS_PREFIX: h.natsPrefix } : {};
const apiOnly: RunningApp = await startApp({
  config: {
    ...loadConfig({
      ADMIN_TOKEN, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent', SANDBOX_SETTLE_MS: '50', ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ...nats, ...env,
    }, ['--role', 'api']),
    databaseUrl: h.database.url,
  },
  log: createLogger('silent'),
  port: 0,
});
let apiOnlyStopped = false;
t.teardown(async () => {
  if (!apiOnlyStopped) await apiOnly.stop();
  await h.stop();
});
const urls = [h.url, apiOnly.url!];
t.comment(`bus: ${h.app.services.bus.name}`);

const creds = (m: MerchantCreds) => ({ 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret });
const stream = (url: string, m: MerchantCreds, lastEventId?: string) =>
  openSse(`${url}/events/stream`, { ...creds(m), ...(lastEventId ? { 'last-event-id': lastEventId } : {}) });

async function payin(app: TestApp, m: MerchantCreds, customer: string, phone: string): Promise<string> {
  const q = await quote(app, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await app.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  return p.body.id as string;
}

async function ascendingIds(m: MerchantCreds, after?: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const qs = new URLSearchParams({ order: 'asc', limit: '100', ...(after ? { after } : {}), ...(cursor ? { cursor } : {}) });
    const r = await h.as(m, 'GET', `/events?${qs}`);
    ids.push(...r.body.data.map((e: { id: string }) => e.id));
    if (!r.body.has_more) return ids;
    cursor = r.body.next_cursor;
  }
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('a stream on the API-only process gets the events the other process records', async (t) => {
  const m = await h.newMerchant('Feed two processes live');
  const customer = await newCustomer(h, m);
  const s = await stream(apiOnly.url!, m);
  t.equal(s.status, 200);
  const id = await payin(h, m, customer, '+237670000001');
  await settled(h, m, 'payins', id);
  const listed = await until('the event listed', async () => { const ids = await ascendingIds(m); return ids.length > 0 ? ids : undefined; });
  await until('the stream has it', async () => s.events.length >= listed.length);
  t.same(s.events.map((e) => e.id), listed, 'the API-only process streamed what the worker process recorded');
  s.destroy();
});

t.test('reconnecting to either process at random moments while payins are created and settled: exactly GET /events?order=asc', async (t) => {
  const seed = Number(process.env.FEED_SEED ?? Date.now() % 100_000);
  t.comment(`seed ${seed} (FEED_SEED=${seed} replays it)`);
  const random = seeded(seed);
  const m = await h.newMerchant('Feed two processes resume');
  const customer = await newCustomer(h, m);
  await settled(h, m, 'payins', await payin(h, m, customer, '+237670000001'));
  const start = (await until('first event', async () => (await ascendingIds(m)).at(-1)))!;

  // Each connection to either process, at random.
  const client = flakyFeedClient({
    open: (last) => stream(urls[Math.floor(random() * 2)]!, m, last), listed: async () => (await ascendingIds(m, start)).length, start, random,
    maxEventsPerConnection: 3, maxConnectionMs: 300,
  });
  // Payins through both processes (the API-only one appends; the other's workers settle and record).
  const viaApiOnly: TestApp = {
    ...h, url: apiOnly.url!,
    as: (mm, method, p, body, o = {}) => request(apiOnly.url!, method, p, { body, headers: { ...creds(mm), ...(o.idem ? { 'idempotency-key': randomUUID() } : {}) } }),
  };
  const apps = [h, viaApiOnly];
  await Promise.all(Array.from({ length: 4 }, async (_, p) => {
    for (let i = 0; i < 4; i++) await payin(apps[(i + p) % 2]!, m, customer, (i + p) % 3 === 0 ? '+237670000099' : '+237670000001');
  }));
  const payins = (await h.as(m, 'GET', '/payins?limit=100')).body.data as Array<{ id: string }>;
  for (const p of payins) await settled(h, m, 'payins', p.id);
  await until('every terminal event recorded', async () => (await ascendingIds(m, start)).length >= 16);
  await client.finish();
  const expected = await ascendingIds(m, start);
  const { got } = client;
  t.same(got, expected, `the stream's ids are the list's, in order (${got.length} events over ${client.reconnects()} connections)`);
  t.equal(new Set(got).size, got.length, 'no event twice');
});

t.test('the bound on open streams per merchant holds across processes', async (t) => {
  const m = await h.newMerchant('Feed two processes bound');
  const open = [await stream(h.url, m), await stream(apiOnly.url!, m), await stream(h.url, m)];
  t.same(open.map((s) => s.status), [200, 200, 200], 'three streams over two processes');
  for (const url of urls) {
    const refused = await stream(url, m);
    t.equal(refused.status, 429, 'a fourth on either process: 429');
    t.equal(JSON.parse(refused.text).error.code, 'rate_limited');
  }
  open[1]!.destroy();
  const again = await until('the slot freed', async () => {
    const s = await stream(h.url, m);
    return s.status === 200 ? s : undefined;
  });
  t.equal(again.status, 200, "a stream closed on one process frees a slot on the other");
  for (const s of [...open, again]) s.destroy();
});

t.test('a key revoked through one process ends its stream on the other within 5 s, freeing the slot', async (t) => {
  const m = await h.newMerchant('Feed revoked across processes');
  const open = await stream(apiOnly.url!, m);
  t.equal(open.status, 200);
  const revoked = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/revoke`);
  t.equal(revoked.status, 200);
  const started = Date.now();
  const ended = await Promise.race([open.ended.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
  t.ok(ended, `the API-only process ended the stream (${Date.now() - started} ms)`);
  await until('the slot freed', async () => Number((await h.app.services.knex('event_stream_leases')
    .where({ merchant_id: m.merchantId }).count({ n: '*' }).first() as { n: string }).n) === 0, 5_000);
});

t.test('stopping a process ends its open streams (the client resumes elsewhere)', async (t) => {
  const m = await h.newMerchant('Feed two processes shutdown');
  const s = await stream(apiOnly.url!, m);
  t.equal(s.status, 200);
  const began = Date.now();
  apiOnlyStopped = true;
  await apiOnly.stop();
  await s.ended;
  t.ok(Date.now() - began < 2000, `stopped with a stream open in ${Date.now() - began} ms`);
  const leases = await h.app.services.knex('event_stream_leases').where({ merchant_id: m.merchantId }).count({ n: '*' }).first();
  t.equal(Number(leases?.n), 0, 'its slot freed');
});
