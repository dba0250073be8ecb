// Event history (issue 10, point 1): the merchant's `GET /{payins|payouts|transfers|quotes|customers}/{id}/events`
// and the operator's `GET /admin/streams/{stream}`: every event in order with version, global position,
// time, data and what led to it (request id, causation id); merchant scoping; secrets never shown;
// and the event store is append-only: the database refuses UPDATE, DELETE and TRUNCATE of events,
// everything the service does (payments, rebuilds, audits) leaves every recorded event as it was,
// and no code path in the sources writes to the events table other than the event store's INSERT.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { request, startTestApp } from './helpers/app.ts';
import { businessDay, root } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled } from './helpers/money.ts';
import { projections } from '../app/registry.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { runAudit } from '../projections/finance-audit.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => h.stop());
const s = h.app.services;

interface Item {
  id: string; stream: string; version: number; position: string; type: string; created_at: string;
  data: Record<string, any>; request_id: string | null; causation_id: string | null; actor: string | null;
}

async function allEvents() {
  const r = await s.knex.raw<{ rows: Array<Record<string, unknown>> }>(
    'SELECT global_position::text AS p, stream_id, stream_version, event_id, type, data::text AS data, metadata::text AS metadata, created_at FROM events ORDER BY global_position',
  );
  return r.rows.map((row) => JSON.stringify(row));
}

const before = await allEvents();
const biz = await businessDay(h, 'History');
const { m } = biz;

const inOrder = (t: Test, items: Item[], stream: string) => {
  t.ok(items.length > 0, `${stream} has events`);
  items.forEach((e, i) => {
    t.equal(e.version, i + 1, `${stream}: version ${i + 1}`);
    t.equal(e.stream, stream);
    if (i > 0) t.ok(BigInt(e.position) > BigInt(items[i - 1]!.position), 'global positions grow');
    t.ok(!Number.isNaN(Date.parse(e.created_at)));
  });
};

t.test('a payin: every event in order, the request that created it, the event the gateway reacted to', async (t) => {
  const customer = await newCustomer(h, m);
  const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('CM_MTN_MOMO', 'CM', 'XAF', '2000') });
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') },
    { idem: true, headers: { 'x-request-id': 'req-history-payin-1' } });
  t.equal(p.status, 201);
  await settled(h, m, 'payins', p.body.id);
  const r = await h.as(m, 'GET', `/payins/${p.body.id}/events`);
  t.equal(r.status, 200);
  const items = r.body.data as Item[];
  inOrder(t, items, `payin-${p.body.id}`);
  t.same(items.map((e) => e.type), ['payin.created', 'payin.pending', 'payin.submitted', 'payin.completed']);
  t.match(items[0], { request_id: 'req-history-payin-1', actor: `merchant:${m.merchantId}`, data: { payin_id: p.body.id, send_amount: '2000', otp_required: false } });
  t.equal(items[1]!.request_id, 'req-history-payin-1', 'created and pending in the same request');
  // The gateway reacted to payin.created (bus message id = event id): its events name it as their cause.
  for (const e of items.slice(2)) {
    t.equal(e.causation_id, items[0]!.id, `${e.type} caused by payin.created`);
    t.equal(e.actor, 'provider-gateway');
  }
  t.equal(r.body.has_more, false);
  t.equal(r.body.next_from_version, null);

  // The quote: created by one request, consumed by the payin's.
  const qe = (await h.as(m, 'GET', `/quotes/${q.id}/events`)).body.data as Item[];
  inOrder(t, qe, `quote-${q.id}`);
  t.same(qe.map((e) => [e.type, e.request_id === 'req-history-payin-1']), [['quote.created', false], ['quote.consumed', true]]);
  t.match(qe[1]!.data, { payment_type: 'payin', payment_id: p.body.id });

  // The wallet credit is in the same append as payin.completed (operator view of the wallet stream).
  const w = await h.admin('GET', `/admin/streams/wallet-${m.merchantId}-XAF`);
  t.equal(w.status, 200);
  const credit = (w.body.data as Item[]).find((e) => e.type === 'wallet.credited' && e.data.credit_id === p.body.id)!;
  t.ok(credit, 'the credit is in the wallet stream');
  t.equal(credit.causation_id, items[0]!.id);
  t.equal(BigInt(credit.position), BigInt(items[3]!.position) + 1n, 'appended right after payin.completed');
});

t.test('payouts, transfers and customers: in order, with request and causation ids', async (t) => {
  const po = (await h.as(m, 'GET', `/payouts/${biz.payouts.completed}/events`)).body.data as Item[];
  inOrder(t, po, `payout-${biz.payouts.completed}`);
  t.same(po.map((e) => e.type), ['payout.created', 'payout.pending', 'payout.submitted', 'payout.completed']);
  t.ok(po[0]!.request_id, 'the create request is recorded');
  t.equal(po[3]!.causation_id, po[0]!.id);

  const tr = (await h.as(m, 'GET', `/transfers/${biz.transfers.relaunched}/events`)).body.data as Item[];
  inOrder(t, tr, `transfer-${biz.transfers.relaunched}`);
  const types = tr.map((e) => e.type);
  t.same(types.slice(0, 2), ['transfer.created', 'transfer.collection_started']);
  t.ok(types.includes('transfer.payout.failed') && types.lastIndexOf('transfer.payout.started') > types.indexOf('transfer.payout.failed'), 'relaunched after the failure');
  t.equal(types[types.length - 1], 'transfer.completed');
  // The collection starts in the create's own append (issue 44): the same request, the same position's neighbour.
  t.equal(tr[1]!.request_id, tr[0]!.request_id, 'the create request started the collection');
  t.equal(BigInt(tr[1]!.position), BigInt(tr[0]!.position) + 1n, 'appended with transfer.created');
  const relaunch = tr.filter((e) => e.type === 'transfer.payout.started').pop()!;
  t.ok(relaunch.request_id, 'the relaunch names its request');
  t.equal(relaunch.causation_id, null);

  const cu = (await h.as(m, 'GET', `/customers/${biz.customer}/events`)).body.data as Item[];
  inOrder(t, cu, `customer-${biz.customer}`);
  t.equal(cu[0]!.type, 'customer.created');
  t.match(cu[0]!.data, { customer_id: biz.customer, merchant_id: m.merchantId, profile: { first_name: 'Ama' } });
});

t.test('merchant scoping: another merchant\'s resource, an unknown id and a malformed id are all 404', async (t) => {
  const other = await h.newMerchant('Someone else');
  const ids: Array<[string, string]> = [
    ['payins', biz.payins.completed], ['payouts', biz.payouts.completed], ['transfers', biz.transfers.completed], ['customers', biz.customer],
  ];
  const q = (await h.as(m, 'GET', '/quotes?limit=1')).body.data[0].id as string;
  ids.push(['quotes', q]);
  for (const [kind, id] of ids) {
    t.equal((await h.as(m, 'GET', `/${kind}/${id}/events`)).status, 200, `${kind}: the owner reads it`);
    const r = await h.as(other, 'GET', `/${kind}/${id}/events`);
    t.equal(r.status, 404, `${kind}: another merchant gets 404`);
    t.equal(r.body.error.code, 'not_found');
    t.equal((await h.as(other, 'GET', `/${kind}/00000000-0000-4000-8000-000000000000/events`)).status, 404, `${kind}: unknown id`);
    t.equal((await h.as(m, 'GET', `/${kind}/not-a-uuid/events`)).status, 404, `${kind}: malformed id`);
  }
  t.equal((await h.as(m, 'GET', `/payins/${biz.payouts.completed}/events`)).status, 404, 'a payout id is not a payin');
  t.equal((await request(h.url, 'GET', `/payins/${biz.payins.completed}/events`)).status, 401, 'no credentials: 401');
});

t.test('operator: any stream, paged; secrets never shown', async (t) => {
  const merchant = await h.newMerchant('Secrets');
  await h.admin('PUT', `/admin/merchants/${merchant.merchantId}/webhook`, { url: 'http://127.0.0.1:9/hook' });
  const rotated = await h.admin('POST', `/admin/merchants/${merchant.merchantId}/api-keys/${merchant.keyId}/rotate`, {});
  const r = await h.admin('GET', `/admin/streams/merchant-${merchant.merchantId}`);
  t.equal(r.status, 200);
  const items = r.body.data as Item[];
  inOrder(t, items, `merchant-${merchant.merchantId}`);
  t.same(items.map((e) => e.type), ['merchant.created', 'merchant.api_key_created', 'merchant.webhook_configured', 'merchant.api_key_rotated']);
  t.equal(items[1]!.data.secret_hash, '[redacted]');
  t.equal(items[1]!.data.api_key, merchant.apiKey, 'the key id is not a secret');
  t.equal(items[2]!.data.signing_secret_sealed, '[redacted]');
  t.equal(items[2]!.data.url, 'http://127.0.0.1:9/hook');
  t.match(items[3]!.data, { secret_hash: '[redacted]', previous_secret_hash: '[redacted]' });
  for (const e of items) t.match(e, { request_id: String, actor: 'operator' });
  const stored = await s.knex('events').where({ stream_id: `merchant-${merchant.merchantId}` }).select('data');
  for (const secret of [merchant.apiSecret, rotated.body.api_secret, ...stored.flatMap((x: any) => [x.data.secret_hash, x.data.signing_secret_sealed].filter(Boolean))]) {
    t.notOk(r.text.includes(secret), 'no secret, hash or sealed value in the answer');
  }

  const page1 = await h.admin('GET', `/admin/streams/merchant-${merchant.merchantId}?limit=3`);
  t.same(page1.body.data.map((e: Item) => e.version), [1, 2, 3]);
  t.match(page1.body, { has_more: true, next_from_version: 4 });
  const page2 = await h.admin('GET', `/admin/streams/merchant-${merchant.merchantId}?limit=3&from_version=4`);
  t.same(page2.body.data.map((e: Item) => e.version), [4]);
  t.match(page2.body, { has_more: false, next_from_version: null });
  t.equal((await h.admin('GET', `/admin/streams/merchant-${merchant.merchantId}?limit=0`)).status, 400);
  t.equal((await h.admin('GET', '/admin/streams/payin-00000000-0000-4000-8000-000000000000')).status, 404, 'unknown stream');
  t.equal((await h.admin('GET', '/admin/streams/..%2Fetc')).status, 404, 'not a stream name');
  t.equal((await h.as(m, 'GET', `/admin/streams/merchant-${m.merchantId}`)).status, 401, 'merchant credentials are not the operator token');
});

t.test('an OTP never appears in any history', async (t) => {
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('SN_ORANGE_MOMO', 'SN', 'XOF', '1500') });
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_ORANGE_MOMO', '+221770000005'), otp: '482915' }, { idem: true });
  t.equal(p.status, 201);
  await settled(h, m, 'payins', p.body.id);
  const merchantView = await h.as(m, 'GET', `/payins/${p.body.id}/events`);
  const operatorView = await h.admin('GET', `/admin/streams/payin-${p.body.id}`);
  t.match(merchantView.body.data[0].data, { otp_required: true, otp_supplied: true }, 'the flags are shown (they are not secrets)');
  t.notOk(merchantView.text.includes('482915'));
  t.notOk(operatorView.text.includes('482915'));
});

t.test('append-only: the database refuses to change or remove an event', async (t) => {
  const one = (await s.knex('events').first('event_id', 'data')) as { event_id: string };
  await t.rejects(s.knex('events').where({ event_id: one.event_id }).update({ type: 'tampered' }), /append-only/, 'UPDATE refused');
  await t.rejects(s.knex.raw(`UPDATE events SET data = '{}'::jsonb`), /append-only/, 'UPDATE of every row refused');
  await t.rejects(s.knex('events').where({ event_id: one.event_id }).delete(), /append-only/, 'DELETE refused');
  await t.rejects(s.knex.raw('TRUNCATE events'), /append-only/, 'TRUNCATE refused (migration 009)');
  await t.rejects(s.knex.raw('TRUNCATE events, streams CASCADE'), /append-only/, 'TRUNCATE with other tables refused');
  t.ok((await s.knex('events').where({ event_id: one.event_id }).first()), 'the event is still there');
});

t.test('append-only: everything the service did left every earlier event exactly as recorded', async (t) => {
  // Rebuilds (online, shadow tables) and an audit on top of the business day and the tests above.
  for (const p of projections) await rebuildProjection(s.knex, s.store, p);
  const report = await runAudit(s.knex, s.store, projections);
  t.equal(report.ok, true, 'the audit passes');
  const after = await allEvents();
  t.ok(after.length > before.length + 50, `${after.length - before.length} events appended`);
  t.same(after.slice(0, before.length), before, 'the events recorded before the business day are unchanged');
  // Every event recorded during the tests is still there, unchanged: compare with what the history API answered.
  const ids = new Set((await s.knex('events').select('event_id')).map((r: { event_id: string }) => r.event_id));
  t.equal(ids.size, after.length, 'no event removed (ids unique and all present)');
  const versions = await s.knex.raw<{ rows: Array<{ stream_id: string; n: string | number; max: number }> }>(
    'SELECT stream_id, count(*) AS n, max(stream_version) AS max FROM events GROUP BY stream_id',
  );
  for (const v of versions.rows) if (Number(v.n) !== v.max) t.fail(`stream ${v.stream_id} has a gap: ${v.n} events, version ${v.max}`);
  t.pass('every stream is gap-free');
});

t.test('append-only: no code path in the sources writes to the events table except the event store\'s INSERT', async (t) => {
  // Complements the trigger above (which is what actually guarantees it): a grep over the sources.
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  // The service's sources: the directories its build compiles.
  const sourceDirs = (JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include;
  for (const dir of sourceDirs) walk(path.join(root, dir));
  const writes = /\b(UPDATE|DELETE\s+FROM|TRUNCATE(\s+TABLE)?|INSERT\s+INTO)\s+"?events"?\b|\(\s*['"]events['"]\s*\)\s*(\.[a-zA-Z]+\([^)]*\)\s*)*\.(update|del|delete|insert|truncate)\(/gi;
  const found: string[] = [];
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    for (const m of text.matchAll(writes)) found.push(`${path.relative(root, f)}: ${m[0]}`);
  }
  // The event store's one append path, on PostgreSQL and PGlite alike: the event_store_append
  // function (defined by its migrations, called only by the store; 018's takes the events as one
  // document, 014's stays for processes of the previous version during an upgrade).
  t.same(found.map((x) => x.replace(/\s+/g, ' ')).sort(), [
    'infra/migrations/014_append_function.ts: INSERT INTO events',
    'infra/migrations/018_append_document.ts: INSERT INTO events',
  ], 'only the event store appends');
});
