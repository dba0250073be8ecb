// The audit log through the operator API (CONTRACT §18, issue 43 point 4): a change records one entry
// with its actor, action, target, request id and address; a read, a refused call or a replay records
// none; GET /admin/audit-log filters, pages and exports CSV; no entry holds a secret; the read model
// rebuilds to the same rows.
import { createHash } from 'node:crypto';
import t from 'tap';
import { ADMIN_TOKEN, request, startTestApp } from './helpers/app.ts';
import { auditLogProjection } from '../projections/audit-log.ts';
import { rebuildProjection } from '../projections/rebuild.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;
const FINGERPRINT = createHash('sha256').update(ADMIN_TOKEN).digest('hex').slice(0, 12);

/** An operator call with our own X-Request-Id (and the token given, the right one by default). */
const call = (method: string, path: string, body?: unknown, o: { requestId?: string; token?: string; headers?: Record<string, string> } = {}) =>
  request(h.url, method, path, {
    body, headers: { authorization: `Bearer ${o.token ?? ADMIN_TOKEN}`, ...(o.requestId ? { 'x-request-id': o.requestId } : {}), ...(o.headers ?? {}) },
  });
const entries = async (query = '') => {
  const r = await call('GET', `/admin/audit-log${query}`);
  if (r.status !== 200) throw new Error(`audit log: ${r.status} ${r.text}`);
  return r.body as { data: any[]; has_more: boolean; next_cursor: string | null };
};
const count = async () => Number((await s.knex('audit_log').count<Array<{ n: string }>>('* as n'))[0]!.n);

t.test('an operator change records one entry: actor, action, target, request id, address', async (t) => {
  const made = await call('POST', '/admin/merchants', { name: 'Audited' }, { requestId: 'audit-create-merchant-1' });
  t.equal(made.status, 201);
  const id = made.body.id as string;
  const { data } = await entries(`?merchant_id=${id}`);
  t.equal(data.length, 1, 'one entry');
  t.match(data[0], {
    merchant_id: id, actor: { type: 'operator', id: FINGERPRINT }, action: 'merchant.created', target: { type: 'merchant', id },
    request_id: 'audit-create-merchant-1', ip: /^127\.0\.0\.1$|^::1$/,
  });
  t.ok(Math.abs(Date.parse(data[0].at) - Date.now()) < 60_000, 'at: now');

  const key = await call('POST', `/admin/merchants/${id}/api-keys`, {}, { requestId: 'audit-key-1' });
  const after = (await entries(`?merchant_id=${id}`)).data;
  t.match(after[0], { action: 'api_key.created', target: { type: 'api_key', id: key.body.id }, request_id: 'audit-key-1' }, 'newest first, the created key as target');
  t.equal(after.length, 2);
});

t.test('a change that names no merchant goes to the operator-wide stream', async (t) => {
  const r = await call('PUT', '/admin/operators/CM_ORANGE_MOMO/availability', { payout: 'delayed' }, { requestId: 'audit-operator-1' });
  t.equal(r.status, 200);
  const { data } = await entries('?action=operator.availability_set');
  t.match(data[0], { merchant_id: null, action: 'operator.availability_set', target: { type: 'operator', id: 'CM_ORANGE_MOMO' }, request_id: 'audit-operator-1' });
  const stream = await s.store.readStream('audit-operator');
  t.ok(stream.some((e) => e.type === 'audit.recorded' && (e.data as any).request_id === 'audit-operator-1'), 'in the event store, on audit-operator');
  await call('PUT', '/admin/operators/CM_ORANGE_MOMO/availability', { payout: 'operational' });
});

t.test('reads, refused calls and replays record nothing', async (t) => {
  const m = await h.newMerchant('Quiet');
  const before = await count();
  const reads = [
    call('GET', `/admin/merchants/${m.merchantId}`), call('GET', `/admin/merchants/${m.merchantId}/api-keys`),
    call('GET', '/admin/operators'), call('GET', '/admin/audit-log'), call('GET', '/admin/audit-log?format=csv'),
    call('POST', '/admin/audit'),
  ];
  for (const r of await Promise.all(reads)) t.equal(r.status, 200);
  t.equal(await count(), before, 'reads: nothing');

  const refused = [
    await call('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'sleeping' }),
    await call('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'inactive' }, { token: 'not-the-token' }),
    await call('POST', `/admin/merchants/${m.merchantId}/api-keys/00000000-0000-4000-8000-000000000000/revoke`),
    await call('POST', '/admin/merchants/00000000-0000-4000-8000-000000000000/api-keys', {}),
    await call('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: 'ftp://example.com/hooks' }),
  ];
  t.same(refused.map((r) => r.status), [400, 401, 404, 404, 400]);
  t.equal(await count(), before, 'refused or failed: nothing');

  const topUp = (key: string) => call('POST', `/admin/merchants/${m.merchantId}/wallets/XAF/top-ups`, { amount: '1000' }, { headers: { 'idempotency-key': key } });
  const first = await topUp('audit-topup-1');
  const again = await topUp('audit-topup-1');
  t.equal(again.body._meta.idempotency_replayed, true);
  const tops = (await entries(`?merchant_id=${m.merchantId}&action=wallet.topped_up`)).data;
  t.equal(tops.length, 1, 'a replayed top-up records nothing more');
  t.match(tops[0], { target: { type: 'top_up', id: first.body.id } });
});

t.test('filters, pages and the CSV export', async (t) => {
  const m = await h.newMerchant('Filtered');
  for (const name of ['a', 'b', 'c']) await call('PUT', `/admin/merchants/${m.merchantId}/pricing`, { payin: { percent: '1', fixed: name === 'a' ? '1' : '2' } });
  await call('PUT', `/admin/merchants/${m.merchantId}/corridors/CM-SN-XAF-XOF`);
  const all = (await entries(`?merchant_id=${m.merchantId}&limit=100`)).data;
  t.same(all.map((e) => e.action), ['merchant.corridor_added', 'merchant.pricing_set', 'merchant.pricing_set', 'merchant.pricing_set', 'api_key.created', 'merchant.created']);
  t.same((await entries(`?merchant_id=${m.merchantId}&action=merchant.pricing_set`)).data.length, 3, 'by action');
  t.equal((await entries(`?merchant_id=${m.merchantId}&actor=operator:${FINGERPRINT}`)).data.length, 6, 'by actor');
  t.equal((await entries(`?merchant_id=${m.merchantId}&actor=member:${FINGERPRINT}`)).data.length, 0, 'another kind of actor');
  t.equal((await entries(`?merchant_id=${m.merchantId}&from=2000-01-01&to=2000-12-31`)).data.length, 0, 'by period');
  t.equal((await entries(`?merchant_id=${m.merchantId}&from=${all[3].at}&to=${all[1].at}`)).data.length, 3, 'from and to inclusive');

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: any[]; next_cursor: string | null } = await entries(`?merchant_id=${m.merchantId}&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.data.map((e) => e.id));
    cursor = page.next_cursor;
  } while (cursor);
  t.same(seen, all.map((e) => e.id), 'pages of 4: every entry once, in order');
  t.equal((await call('GET', '/admin/audit-log?cursor=bogus')).status, 400, 'a cursor not ours');
  t.equal((await call('GET', '/admin/audit-log?action=made.up')).status, 400, 'an action not ours');

  const csv = await call('GET', `/admin/audit-log?merchant_id=${m.merchantId}&format=csv`);
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  t.match(csv.headers.get('content-disposition'), /attachment; filename="audit-log\.csv"/);
  const lines = csv.text.split('\r\n');
  t.equal(lines[0], 'id,at,merchant_id,actor_type,actor_id,action,target_type,target_id,request_id,ip');
  t.equal(lines.length, 1 + all.length + 1, 'a header, a line per entry, a final CRLF');
  t.equal(lines[1]!.split(',')[0], all[0].id);
  t.equal(lines[1]!.split(',')[5], 'merchant.corridor_added');
});

t.test('no entry holds a secret: the token, a key secret, a signing secret, an invitation token', async (t) => {
  const m = await h.newMerchant('Secrets');
  const secrets = [ADMIN_TOKEN, m.apiSecret];
  secrets.push((await call('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/rotate`, {})).body.api_secret);
  secrets.push((await call('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: 'https://hooks.example.com/in' })).body.signing_secret);
  secrets.push((await call('POST', `/admin/merchants/${m.merchantId}/webhook/rotate-secret`)).body.signing_secret);
  secrets.push((await call('POST', `/admin/merchants/${m.merchantId}/dashboard-users`, { email: 'secret@example.com' })).body.invitation_token);
  t.ok(secrets.every((x) => typeof x === 'string' && x.length >= 16), 'each secret was answered');
  const stored = JSON.stringify(await s.store.readStream(`audit-${m.merchantId}`), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) + JSON.stringify(await s.knex('audit_log').select('*'))
    + (await call('GET', '/admin/audit-log?format=csv')).text;
  t.equal((await entries(`?merchant_id=${m.merchantId}`)).data.length, 6, 'every change recorded');
  for (const secret of secrets) t.notOk(stored.includes(secret), 'no secret in the events, the rows or the export');
});

t.test('the read model rebuilds to the same rows', async (t) => {
  const rows = async () => s.knex('audit_log').select('*').orderBy('id');
  const before = await rows();
  t.ok(before.length >= 10);
  await rebuildProjection(s.knex, s.store, auditLogProjection);
  t.same(await rows(), before);
});
