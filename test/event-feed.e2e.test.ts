// The merchant's event feed (CONTRACT.md §12): GET /events?order=asc&after= and GET /events/stream.
// A client that drops its stream at random moments (seeded) while payins are created and settled,
// and resumes with Last-Event-ID, ends with exactly the ids of GET /events?order=asc, in order, once
// each; the list and the stream share that order. Plus isolation, the bound on open streams, the
// heartbeat and the 404s.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, type MerchantCreds, type TestApp } from './helpers/app.ts';
import { newCustomer, party, quote, leg, settled, sleep, until } from './helpers/money.ts';
import { flakyFeedClient, openSse, type SseClient } from './helpers/sse.ts';

// A short HTTP request time-out: a stream outlives it (it bounds receiving the request, not the answer).
// A short lease, renewed every third of it: the outage test below outlasts it in seconds.
const LEASE_MS = 1500;
const h = await startTestApp({ env: {
  EVENT_STREAMS_PER_MERCHANT: '3', EVENT_STREAM_HEARTBEAT_MS: '150', EVENT_STREAM_POLL_MS: '200', HTTP_REQUEST_TIMEOUT_MS: '1000',
  EVENT_STREAM_LEASE_MS: String(LEASE_MS),
} });
t.teardown(() => h.stop());

const creds = (m: MerchantCreds) => ({ 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret });
const stream = (m: MerchantCreds, lastEventId?: string, url = h.url) =>
  openSse(`${url}/events/stream`, { ...creds(m), ...(lastEventId ? { 'last-event-id': lastEventId } : {}) });

/** A payin of 5000 XAF (a phone ending 99 fails at the sandbox); answers its id without waiting. */
async function payin(app: TestApp, m: MerchantCreds, customer: string, phone: string): Promise<string> {
  const q = await quote(app, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await app.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  return p.body.id as string;
}

/** Every id of GET /events?order=asc (after `after`), page by page. */
async function ascendingIds(m: MerchantCreds, after?: string, limit = 100): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const qs = new URLSearchParams({ order: 'asc', limit: String(limit), ...(after ? { after } : {}), ...(cursor ? { cursor } : {}) });
    const r = await h.as(m, 'GET', `/events?${qs}`);
    if (r.status !== 200) throw new Error(`list failed: ${r.status} ${r.text}`);
    ids.push(...r.body.data.map((e: { id: string }) => e.id));
    if (!r.body.has_more) return ids;
    cursor = r.body.next_cursor;
  }
}

/** A merchant with `n` settled payins (2n events: each payin's created... and terminal events). */
async function merchantWithPayins(name: string, n: number): Promise<{ m: MerchantCreds; customer: string }> {
  const m = await h.newMerchant(name);
  const customer = await newCustomer(h, m);
  for (let i = 0; i < n; i++) await settled(h, m, 'payins', await payin(h, m, customer, i % 2 ? '+237670000099' : '+237670000001'));
  await until('events recorded', async () => (await ascendingIds(m)).length >= n);
  return { m, customer };
}

/** mulberry32: a seeded generator, so a failing run can be replayed with its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('GET /events?order=asc&after=: oldest first in feed order, after an event, paged, 404 for ids not the merchant\'s', async (t) => {
  const { m } = await merchantWithPayins('Feed list', 4);
  const other = await merchantWithPayins('Feed list other', 1);
  const all = await ascendingIds(m);
  t.ok(all.length >= 4, `the merchant's events (${all.length})`);
  t.same(await ascendingIds(m, undefined, 1), all, 'page by page (limit 1, next_cursor) lists the same ids in the same order');
  const desc = await h.as(m, 'GET', '/events?limit=100');
  t.same([...desc.body.data.map((e: { id: string }) => e.id)].sort(), [...all].sort(), 'the same events as the newest-first list');
  t.same(await ascendingIds(m, all[0]), all.slice(1), 'after the first: the rest');
  t.same(await ascendingIds(m, all[1], 1), all.slice(2), 'after the second, page by page');
  t.same(await ascendingIds(m, all[all.length - 1]), [], 'after the last: nothing');
  const filtered = await h.as(m, 'GET', `/events?order=asc&after=${all[0]}&event=payin.failed`);
  t.ok(filtered.body.data.every((e: { event: string }) => e.event === 'payin.failed') && filtered.body.data.length > 0, 'filters apply as in the newest-first list');

  const otherId = (await ascendingIds(other.m))[0]!;
  const unknown = await h.as(m, 'GET', '/events?order=asc&after=00000000-0000-4000-8000-000000000000');
  const foreign = await h.as(m, 'GET', `/events?order=asc&after=${otherId}`);
  t.equal(unknown.status, 404);
  t.equal(foreign.status, 404, "another merchant's event id: 404");
  t.same({ ...foreign.body.error, message: '', request_id: '' }, { ...unknown.body.error, message: '', request_id: '' }, 'answered like an unknown id');
  const noOrder = await h.as(m, 'GET', `/events?after=${all[0]}`);
  t.match(noOrder.body, { error: { code: 'bad_request', details: [{ field: 'query.after' }] } }, 'after without order=asc: 400');
  t.equal(noOrder.status, 400);
  const descCursor = (await h.as(m, 'GET', '/events?limit=1')).body.next_cursor;
  const mixed = await h.as(m, 'GET', `/events?order=asc&cursor=${descCursor}`);
  t.match(mixed.body, { error: { code: 'bad_request', details: [{ field: 'query.cursor' }] } }, "a newest-first cursor is not the feed's: 400");
  const badAfter = await h.as(m, 'GET', '/events?order=asc&after=nope');
  t.equal(badAfter.status, 400, 'an after that is no uuid: 400');
});

t.test('a client dropping its stream at random moments while payins are created and settled ends with exactly GET /events?order=asc', async (t) => {
  const seed = Number(process.env.FEED_SEED ?? Date.now() % 100_000);
  t.comment(`seed ${seed} (FEED_SEED=${seed} replays it)`);
  const random = seeded(seed);
  const { m, customer } = await merchantWithPayins('Feed resume', 1);
  const start = (await ascendingIds(m)).at(-1)!;

  const client = flakyFeedClient({
    open: (last) => stream(m, last), listed: async () => (await ascendingIds(m, start)).length, start, random,
    maxEventsPerConnection: 4, maxConnectionMs: 250,
  });

  const phones = ['+237670000001', '+237670000099'];
  const producers = Array.from({ length: 4 }, async (_, p) => {
    for (let i = 0; i < 8; i++) {
      const id = await payin(h, m, customer, phones[(i + p) % 2]!);
      if (random() < 0.5) await settled(h, m, 'payins', id);
    }
  });
  await Promise.all(producers);
  const payins = (await h.as(m, 'GET', '/payins?limit=100')).body.data as Array<{ id: string }>;
  for (const p of payins) await settled(h, m, 'payins', p.id);
  await until('every terminal event recorded', async () => (await ascendingIds(m, start)).length >= 32);
  await client.finish();
  const expected = await ascendingIds(m, start);
  const { got } = client;
  t.same(got, expected, `the stream's ids are the list's, in order (${got.length} events over ${client.reconnects()} connections)`);
  t.equal(new Set(got).size, got.length, 'no event twice');
  t.ok(client.reconnects() >= 5, `reconnected often (${client.reconnects()})`);
});

t.test('a stream without Last-Event-ID starts with the next event; data is the webhook envelope; never another merchant\'s', async (t) => {
  const a = await merchantWithPayins('Feed live A', 1);
  const b = await merchantWithPayins('Feed live B', 1);
  const before = await ascendingIds(a.m);
  const beforeB = await ascendingIds(b.m);
  const sa = await stream(a.m);
  const sb = await stream(b.m);
  t.equal(sa.status, 200);
  t.match(String(sa.headers['content-type']), /^text\/event-stream/);
  const id = await payin(h, a.m, a.customer, '+237670000001');
  await settled(h, a.m, 'payins', id);
  const after = await until('the new events listed', async () => {
    const ids = await ascendingIds(a.m, before.at(-1));
    return ids.length >= 1 ? ids : undefined;
  });
  await until('the stream has them', async () => sa.events.length >= after.length);
  t.same(sa.events.map((e) => e.id), after, 'only the events recorded after it opened');
  const listed = (await h.as(a.m, 'GET', `/events/${after[0]}`)).body;
  const envelope = JSON.parse(sa.events[0]!.data);
  t.same(envelope, { id: listed.id, event: listed.event, created_at: listed.created_at, data: listed.data }, 'data: the webhook envelope');
  // Then one of B's own: once B's stream has it, it would have had A's (recorded before) too.
  await settled(h, b.m, 'payins', await payin(h, b.m, b.customer, '+237670000001'));
  const afterB = await until("B's new events listed", async () => {
    const ids = await ascendingIds(b.m, beforeB.at(-1));
    return ids.length >= 1 ? ids : undefined;
  });
  await until("B's stream has them", async () => sb.events.length >= afterB.length);
  t.same(sb.events.map((e) => e.id), afterB, "the other merchant's stream got its own events, none of A's");
  const foreign = await stream(b.m, after[0]);
  t.equal(foreign.status, 404, "Last-Event-ID of another merchant's event: 404");
  t.equal(JSON.parse(foreign.text).error.code, 'not_found');
  const bad = await stream(b.m, 'not-an-id');
  t.equal(bad.status, 400, 'a Last-Event-ID that is no event id: 400');
  sa.destroy();
  sb.destroy();
});

t.test('an idle stream gets a comment every heartbeat, past the HTTP request time-out', async (t) => {
  const m = await h.newMerchant('Feed idle');
  const s: SseClient = await stream(m);
  let ended = false;
  void s.ended.then(() => { ended = true; });
  const opened = s.comments.length;
  const openedAt = Date.now();
  // Five heartbeats, and past the server's 1 s request time-out (its own wall clock).
  await until('five keep-alive comments, 1.5 s after opening', () => s.comments.length - opened >= 5 && Date.now() - openedAt >= 1500);
  t.ok(s.comments.slice(opened).every((c) => c === 'keep-alive'));
  t.same(s.events, []);
  t.notOk(ended, 'still open after the 1 s request time-out');
  s.destroy();
});

t.test('at most EVENT_STREAMS_PER_MERCHANT open streams per merchant: 429 rate_limited past it', async (t) => {
  const m = await h.newMerchant('Feed bound');
  const other = await h.newMerchant('Feed bound other');
  const open = [await stream(m), await stream(m), await stream(m)];
  t.same(open.map((s) => s.status), [200, 200, 200]);
  const refused = await stream(m);
  t.equal(refused.status, 429);
  t.equal(JSON.parse(refused.text).error.code, 'rate_limited');
  t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After');
  const elsewhere = await stream(other);
  t.equal(elsewhere.status, 200, "another merchant's streams count apart");
  // Four open streams, one LISTEN connection for the process (no connection held per stream).
  const listeners = await h.app.services.knex.raw<{ rows: Array<{ n: string }> }>(
    "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN webhook_feed'");
  t.equal(Number(listeners.rows[0]!.n), 1, 'one LISTEN connection for all the streams');
  open[0]!.destroy();
  await open[0]!.ended;
  const again = await until('a slot freed', async () => {
    const s = await stream(m);
    return s.status === 200 ? s : undefined;
  });
  t.equal(again.status, 200, 'a closed stream frees its slot');
  for (const s of [...open, again, elsewhere]) s.destroy();
});

/** The merchant's live stream leases (slots held), all processes together. */
const leaseCount = async (m: MerchantCreds) => Number((await h.app.services.knex('event_stream_leases')
  .where({ merchant_id: m.merchantId }).where('expires_at', '>', h.app.services.knex.raw('now()')).count({ n: '*' }).first() as { n: string }).n);

/** Waits for the server to end the stream, within the contract's 5 seconds (CONTRACT §17); answers how long it took. */
async function endsWithin5s(t: Test, client: SseClient, what: string): Promise<void> {
  const started = Date.now();
  const ended = await Promise.race([client.ended.then(() => true), sleep(5_000).then(() => false)]);
  t.ok(ended, `${what}: the stream ended (${Date.now() - started} ms)`);
}

t.test('a stream belongs to its credential: revoked, expired, its old secret\'s grace over, or the merchant inactive ends it within 5 s and frees its slot', async (t) => {
  const m = await h.newMerchant('Feed credentials');
  const keyed = async (body: Record<string, unknown> = {}) => {
    const k = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, body);
    return { ...m, keyId: k.body.id as string, apiKey: k.body.api_key as string, apiSecret: k.body.api_secret as string };
  };
  const revoked = await keyed();
  const expiring = await keyed({ expires_at: new Date(Date.now() + 1500).toISOString() });
  const rotated = await keyed();
  const streams = { revoked: await stream(revoked), expiring: await stream(expiring), rotated: await stream(rotated) };
  t.same(Object.values(streams).map((x) => x.status), [200, 200, 200]);
  t.equal(await leaseCount(m), 3, 'three slots held');

  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${revoked.keyId}/revoke`)).status, 200);
  await endsWithin5s(t, streams.revoked, 'key revoked');
  await endsWithin5s(t, streams.expiring, 'key expired');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${rotated.keyId}/rotate`, { grace_seconds: 3 })).status, 201);
  await sleep(500); // a moment within the grace, 2.5 s from its end: a loaded machine is not that late
  t.notOk(await Promise.race([streams.rotated.ended.then(() => true), sleep(0).then(() => false)]), 'within the grace, the old secret\'s stream goes on');
  await endsWithin5s(t, streams.rotated, 'the old secret\'s grace over');
  await until('every slot freed', async () => (await leaseCount(m)) === 0);

  const active = await stream(m);
  t.equal(active.status, 200, 'a standing key opens a stream');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'inactive' })).status, 200);
  await endsWithin5s(t, active, 'merchant set inactive');
  t.equal((await stream(m)).status, 401, 'and no new stream');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'active' })).status, 200);
  const back = await stream(m);
  t.equal(back.status, 200, 'active again: streams again');
  back.destroy();
});

t.test('leases come back after a renewal outage longer than their lifetime: the bound holds; a stream whose slot was taken meanwhile ends', async (t) => {
  const m = await h.newMerchant('Feed lease outage');
  const knex = h.app.services.knex;
  const open = [await stream(m), await stream(m), await stream(m)];
  t.same(open.map((x) => x.status), [200, 200, 200]);
  // As after an outage: the leases expired and another process's take deleted them.
  await knex('event_stream_leases').where({ merchant_id: m.merchantId }).delete();
  t.equal(await leaseCount(m), 0);
  await until('the three leases back', async () => (await leaseCount(m)) === 3);
  t.equal((await stream(m)).status, 429, 'so a fourth stream is still refused');
  t.ok(open.every((x) => x.status === 200), 'the three streams go on');
  // Now the slots were taken elsewhere while ours were gone: ours cannot come back, so they end.
  await knex('event_stream_leases').where({ merchant_id: m.merchantId }).delete();
  await knex('event_stream_leases').insert([0, 1, 2].map(() => ({ id: randomUUID(), merchant_id: m.merchantId, expires_at: knex.raw("now() + interval '1 hour'") })));
  for (const x of open) await endsWithin5s(t, x, 'its slot taken during the outage');
  t.equal(await leaseCount(m), 3, 'the merchant holds its bound, no more');
  await knex('event_stream_leases').where({ merchant_id: m.merchantId }).delete();
});
