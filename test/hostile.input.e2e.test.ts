// Hostile input (issue 9 point 4): every operation of the served OpenAPI document gets requests
// generated from its schema: deterministic mutations (wrong types for every field, missing
// required and extra fields, huge strings, deep JSON, unicode, bad amounts and dates, bad ids in
// paths and queries, bad headers) and fast-check properties (fixed seed, bounded runs; SOAK=1 for
// many more). Authenticated as a valid merchant (operator for /admin) so requests get past auth.
// Nothing may answer 5xx, and every error body must match the document's Error schema.
import t from 'tap';
import fc from 'fast-check';
import { randomUUID, randomBytes } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds } from './helpers/app.ts';
import { dbLabel } from './helpers/db.ts';
import { leg, party, quote, topUp, until } from './helpers/money.ts';
import { transferQuote, payerCM, recipientSN } from './helpers/transfers.ts';
import { operations, sample, fields, setAt, REMOVE, fillPath, type Op } from './helpers/openapi-walk.ts';
import { rawRequest } from './helpers/raw-http.ts';

const SOAK = process.env.SOAK === '1';
const SEED = Number(process.env.FUZZ_SEED ?? 9_042_024);
const RUNS_PER_OP = SOAK ? 300 : 8;
const CONCURRENCY = 4;
// Thousands of requests: generous on a loaded CI machine (tap's default is 120 s a file).
t.setTimeout(SOAK ? 4 * 3_600_000 : 420_000);

const h = await startTestApp();
t.teardown(() => h.stop());
const doc = (await request(h.url, 'GET', '/openapi.json')).body;
const isError = new Ajv2020({ strict: false }).compile(doc.components.schemas.Error);
const ops = operations(doc);

// The fuzzing merchant has one of everything, so that ids in paths and bodies are real ones; the
// operator endpoints aim at a victim merchant (a fuzzed status or revoke must not lock the fuzzer out).
const F: MerchantCreds = await h.newMerchant('Fuzzer');
const V: MerchantCreds = await h.newMerchant('Victim');
await h.admin('PUT', `/admin/merchants/${F.merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'] });
await topUp(h, F, 'XOF', '1000000');
const customer = (await h.as(F, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop', phone: '+221770000001', country_code: 'SN' }, { idem: true })).body.id as string;
const payinQuote = await quote(h, F, 'payin', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
const payin = (await h.as(F, 'POST', '/payins', { quote_id: payinQuote.id, customer_id: customer, source: party('SN', 'SN_WAVE_MOMO', '+221770000001') }, { idem: true })).body.id as string;
const payoutQuote = await quote(h, F, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
const payout = (await h.as(F, 'POST', '/payouts', {
  quote_id: payoutQuote.id, customer_id: customer, payment_reason_text: 'x', recipient: { ...party('SN', 'SN_WAVE_MOMO', '+221770000001'), recipient_type: 'individual', first_name: 'A', last_name: 'B' },
}, { idem: true })).body.id as string;
const tq = await transferQuote(h, F);
const transfer = (await h.as(F, 'POST', '/transfers', { quote_id: tq.id, customer_id: customer, payer: payerCM(), recipient: recipientSN('+221770000099') }, { idem: true })).body.id as string;
// A refund of the payin once it completed (CONTRACT §9): its id for the refund paths.
await until('the payin completed', async () => (await h.as(F, 'GET', `/payins/${payin}`)).body.status === 'completed');
const refund = (await h.as(F, 'POST', '/refunds', { payin_id: payin, amount: '1000' }, { idem: true })).body.id as string;
// A payment link (CONTRACT §16): its id for the payment-link paths.
const paymentLink = (await h.as(F, 'POST', '/payment-links', { amount: '5000', currency: 'XOF', description: 'x', max_payments: null }, { idem: true })).body.id as string;
const eventId = await until('a webhook event', async () => (await h.as(F, 'GET', '/events')).body.data?.[0]?.id as string | undefined);
// An active quote for bodies (a mutation that happens to be valid may consume it: each body gets a fresh one from a pool).
const freshQuote = await quote(h, F, 'payin', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));

const pathValues: Record<string, string> = {
  customer_id: customer, quote_id: payinQuote.id, payin_id: payin, payout_id: payout, transfer_id: transfer, refund_id: refund, event_id: eventId, payment_link_id: paymentLink,
  merchant_id: V.merchantId, key_id: V.keyId, currency: 'XOF', provider: 'sandbox', projection: 'no-such-projection', stream: `payin-${payin}`,
};
const known = {
  customer_id: customer, quote_id: freshQuote.id, payin_id: payin, phone: '+221770000001', operator_code: 'SN_WAVE_MOMO', country_code: 'SN',
  send_currency: 'XOF', receive_currency: 'XOF', rail_type: 'mobile_money', payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO',
  payin_currency: 'XAF', payout_currency: 'XOF', send_amount: '5000', payin_amount: '10000', url: 'http://127.0.0.1:9/hook',
};

// --- sending and checking -------------------------------------------------------------------------
interface Req { op: Op; what: string; path: string; query?: string; headers?: Record<string, string>; body?: unknown; raw?: string }
let sent = 0;
const fiveXX: string[] = [];
const malformed: string[] = [];
const byStatus = new Map<number, number>();

function check(what: string, status: number, text: string): void {
  sent++;
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  if (status >= 500 || status === 0) fiveXX.push(`${what} → ${status} ${text.slice(0, 200)}`);
  if (status >= 400) {
    let body: unknown;
    try { body = JSON.parse(text); } catch { body = undefined; }
    if (!isError(body)) malformed.push(`${what} → ${status} ${text.slice(0, 200)}`);
  }
}

function authHeaders(op: Op): Record<string, string> {
  const hd: Record<string, string> = {};
  if (op.auth === 'merchant') Object.assign(hd, { 'x-api-key': F.apiKey, 'x-api-secret': F.apiSecret });
  if (op.auth === 'admin') hd.authorization = `Bearer ${ADMIN_TOKEN}`;
  if (op.idempotent) hd['idempotency-key'] = randomBytes(8).toString('hex');
  return hd;
}

/** Operations that answer a stream (Server-Sent Events): an accepted one never ends by itself. */
const streamed = new Set(ops.filter((o) => doc.paths[o.path][o.method.toLowerCase()].responses['200']?.content?.['text/event-stream']).map((o) => o.operationId));

/** A stream's answer: its status, and its body unless the stream was accepted (then closed at once). */
async function openStream(p: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const ac = new AbortController();
  const res = await fetch(h.url + p, { headers, signal: ac.signal });
  if (res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    ac.abort();
    return { status: 200, text: '' };
  }
  return { status: res.status, text: await res.text() };
}

async function send(r: Req): Promise<void> {
  const headers = { ...authHeaders(r.op), ...(r.headers ?? {}) };
  const p = r.path + (r.query ? `?${r.query}` : '');
  const what = `${r.op.method} ${r.op.path} [${r.what}]`;
  try {
    const res = streamed.has(r.op.operationId) && r.op.method === 'GET' && r.raw === undefined && r.body === undefined
      ? await openStream(p, headers)
      : r.raw !== undefined || r.body !== undefined
      ? await request(h.url, r.op.method, p, r.raw !== undefined ? { raw: r.raw, headers } : { body: r.body, headers })
      : await request(h.url, r.op.method, p, { headers });
    check(what, res.status, res.text);
  } catch (err) {
    check(what, 0, failureOf(err));
  }
}

/** A request that got no answer, with its cause (fetch says only "fetch failed"; the cause says why). */
function failureOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${String(err)} (cause: ${cause.code ?? ''} ${cause.message ?? ''})` : String(err);
}

async function sendAll(reqs: Req[]): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (i < reqs.length) await send(reqs[i++]!);
  }));
}

// --- deterministic mutations ----------------------------------------------------------------------
const BAD_IDS = ['not-a-uuid', '00000000-0000-0000-0000-000000000000', randomUUID(), '\u0000', '../../etc/passwd', 'x'.repeat(5000), '😀', "' OR 1=1 --", '%', '{id}'];
const BAD_QUERY = ['abc', '-1', '0', '101', '1e3', '1.5', '99999999999999999999', '', '\u0000', 'x'.repeat(10_000), '😀\u202e', '2024-02-30T00:00:00Z', 'not-a-date', "' OR 1=1 --", '[]', 'null'];
const WRONG_TYPES: unknown[] = [12345, -1.5, true, null, [], {}, 'str', [1, 'a', null]];
const STRINGS = ['😀🎉👩‍👩‍👧', '\u202eRTL\u202c مرحبا', 'a\u0000b', '\ud800', 'x\udfffy', '\uffff\ufffe', ' ', 'x'.repeat(5000)];
const LONG = 'x'.repeat(200_000); // under the body limit, over every maxLength: once per operation (it is slow to send)
const AMOUNTS: unknown[] = ['-1', '0', '1e5', '1.5', '0.0001', '99999999999999999999999999999999', '', ' 100', '1,000', '٣٠٠', '+100', '0x10', 1000, -5, 1e21, 0.5];
const DATES = ['2024-02-30', '2024-13-01', '0000-00-00', '9999-12-31T23:59:60Z', 'yesterday', '', '2024-01-01T25:00:00Z', '-000001-01-01', '2024-01-01T00:00:00+99:00', '1e10'];
const CONTENT_TYPES = ['text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '*/*'];

/** In CI, `n` of `list` from `offset` on (rotating, so every value is used across fields); all with SOAK=1. */
function pick<T>(list: T[], n: number, offset: number): T[] {
  if (SOAK || list.length <= n) return list;
  return Array.from({ length: n }, (_, i) => list[(offset + i) % list.length]!);
}
let rotation = 0;

function deep(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

const isAmount = (name: string, s: any) => /amount/.test(name) || s.pattern === '^[0-9]+(\\.[0-9]+)?$';
const isDate = (name: string, s: any) => s.format === 'date' || s.format === 'date-time' || /date|_at$|^from$|^to$/.test(name);

function mutations(op: Op): Req[] {
  const out: Req[] = [];
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const path = fillPath(op.path, pathValues);
  const base = op.body ? sample(doc, op.body, known) : undefined;
  const withBody = (what: string, extra: Partial<Req>) => out.push({ op, what, path, ...(op.body ? { body: base } : {}), ...extra });

  withBody('as generated', {});
  for (const p of pathParams) {
    for (const bad of BAD_IDS) out.push({ op, what: `path ${p.name}=${JSON.stringify(bad).slice(0, 20)}`, path: fillPath(op.path, { ...pathValues, [p.name]: bad }), ...(op.body ? { body: base } : {}) });
    // A lone surrogate cannot be percent-encoded by encodeURIComponent: its UTF-8 form, by hand.
    out.push({ op, what: `path ${p.name}=lone surrogate`, path: op.path.replace(/\{([^}]+)\}/g, (_, n) => (n === p.name ? '%ED%A0%80' : encodeURIComponent(pathValues[n] ?? ''))) });
  }
  for (const q of queryParams) {
    for (const bad of pick(BAD_QUERY, 8, rotation++)) withBody(`query ${q.name}=${JSON.stringify(bad).slice(0, 20)}`, { query: `${q.name}=${encodeURIComponent(bad)}` });
    withBody(`query ${q.name} repeated`, { query: `${q.name}=1&${q.name}=2` });
    withBody(`query ${q.name} raw %`, { query: `${q.name}=%E0%A4%A` });
  }
  withBody('unknown query parameter', { query: 'zz_unknown=1' });
  if (op.body) {
    for (const v of [[], 'str', 123, null, true]) withBody(`body ${JSON.stringify(v)}`, { body: v });
    withBody('extra top-level field', { body: { ...(base as object), zz_extra: 'x' } });
    withBody('deep JSON body, depth 10000', { raw: deep(10_000), headers: { 'content-type': 'application/json' } });
    withBody('deep JSON in a field, depth 10000', { raw: `{"x":${deep(10_000)}}`, headers: { 'content-type': 'application/json' } });
    withBody('1 MB string', { raw: JSON.stringify({ ...(base as object), zz_huge: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    for (const ct of CONTENT_TYPES) withBody(`content-type ${ct}`, { raw: JSON.stringify(base), headers: { 'content-type': ct } });
    withBody('broken JSON', { raw: '{"a": ', headers: { 'content-type': 'application/json' } });
    withBody('NUL byte JSON', { raw: '\u0000', headers: { 'content-type': 'application/json' } });
    let long = false;
    for (const f of fields(doc, op.body)) {
      const name = f.path[f.path.length - 1]!;
      const label = f.path.join('.');
      const types = Array.isArray(f.schema.type) ? f.schema.type : [f.schema.type];
      const wrong = WRONG_TYPES.filter((v) => {
        const jsType = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
        return !types.includes(jsType);
      });
      for (const v of pick(wrong, 4, rotation++)) {
        withBody(`${label}=${JSON.stringify(v)}`, { body: setAt(base, f.path, v) });
      }
      withBody(`${label} missing`, { body: setAt(base, f.path, REMOVE) });
      if (f.schema.type === 'object' || f.schema.properties) withBody(`${label}.zz_extra`, { body: setAt(base, [...f.path, 'zz_extra'], 'x') });
      if (f.schema.type === 'string' || f.schema.type === undefined) {
        for (const s of pick(STRINGS, 5, rotation++)) withBody(`${label}=${JSON.stringify(s).slice(0, 24)}`, { body: setAt(base, f.path, s) });
        if (!long || SOAK) withBody(`${label}=200 KB`, { body: setAt(base, f.path, LONG) });
        long = true;
      }
      if (isAmount(name, f.schema)) for (const a of pick(AMOUNTS, 10, rotation++)) withBody(`${label}=${JSON.stringify(a)}`, { body: setAt(base, f.path, a) });
      if (isDate(name, f.schema)) for (const d of DATES) withBody(`${label}=${JSON.stringify(d)}`, { body: setAt(base, f.path, d) });
      if (f.schema.format === 'uuid' || /_id$/.test(name)) for (const b of BAD_IDS) withBody(`${label}=${JSON.stringify(b).slice(0, 20)}`, { body: setAt(base, f.path, b) });
    }
  }
  return out;
}

const headerKindsDone = new Set<string>();

// Headers no client library would send, written on the socket: control characters, non-ASCII
// bytes, repeated or oversized headers, malformed credentials.
function headerMutations(op: Op): Array<{ what: string; head: (auth: Record<string, string>) => string; body?: string; noHost?: boolean }> {
  const path = fillPath(op.path, pathValues);
  const body = op.body ? JSON.stringify(sample(doc, op.body, known)) : '';
  const ct: Record<string, string> = op.body ? { 'content-type': 'application/json' } : {};
  const line = (hd: Record<string, string>) => Object.entries({ ...ct, ...hd }).map(([k, v]) => `${k}: ${v}`).join('\r\n');
  const start = `${op.method} ${path} HTTP/1.1`;
  const variants: Array<[string, (a: Record<string, string>) => Record<string, string>]> = [
    ['Idempotency-Key 300 chars', (a) => ({ ...a, 'idempotency-key': 'k'.repeat(300) })],
    ['Idempotency-Key control char', (a) => ({ ...a, 'idempotency-key': 'a\x01b' })],
    ['Idempotency-Key latin-1 byte', (a) => ({ ...a, 'idempotency-key': 'caf\xe9' })],
    ['Idempotency-Key UTF-8 emoji bytes', (a) => ({ ...a, 'idempotency-key': Buffer.from('😀', 'utf8').toString('latin1') })],
    ['Idempotency-Key empty', (a) => ({ ...a, 'idempotency-key': '' })],
    ['X-Api-Key empty', (a) => ({ ...a, 'x-api-key': '' })],
    ['X-Api-Key 12 KB', (a) => ({ ...a, 'x-api-key': 'k'.repeat(12_000) })],
    ['X-Api-Key DEL byte', (a) => ({ ...a, 'x-api-key': `${F.apiKey}\x7f` })],
    ['X-Api-Secret wrong', (a) => ({ ...a, 'x-api-secret': 'sk_wrong' })],
    ['X-Api-Secret non-ASCII', (a) => ({ ...a, 'x-api-secret': '\xff\xfe' })],
    ['Authorization: Bearer', (a) => ({ ...a, authorization: 'Bearer' })],
    ['Authorization: Basic', (a) => ({ ...a, authorization: 'Basic Zm9vOmJhcg==' })],
    ['Authorization 10 KB', (a) => ({ ...a, authorization: `Bearer ${'x'.repeat(10_000)}` })],
    ['header of 20 KB', (a) => ({ ...a, 'x-padding': 'p'.repeat(20_000) })],
    ['X-Request-Id hostile', (a) => ({ ...a, 'x-request-id': '\x1b[31m<script>' })],
  ];
  // Every variant on the first operation of each kind (public, operator, merchant, idempotent), four rotating ones on the others.
  const kind = `${op.auth}/${op.idempotent}`;
  const first = !headerKindsDone.has(kind);
  headerKindsDone.add(kind);
  const chosen = first ? variants : pick(variants, 4, rotation++);
  const out: Array<{ what: string; head: (auth: Record<string, string>) => string; body?: string; noHost?: boolean }> = chosen.map(([what, f]) => ({ what, head: (a: Record<string, string>) => `${start}\r\n${line(f(a))}`, body }));
  out.push({ what: 'X-Api-Key twice', head: (a) => `${start}\r\n${line({ ...a, 'x-api-key': 'other' })}\r\nx-api-key: ${F.apiKey}`, body });
  out.push({ what: 'no Host header', head: (a) => `${start}\r\n${line(a)}`, body, noHost: true });
  if (op.body) out.push({ what: 'invalid UTF-8 body', head: (a) => `${start}\r\n${line(a)}`, body: '{"name":"\xff\xfe"}' });
  return out;
}

// --- fast-check: schema-shaped bodies with random values in random fields, random ids and queries --
function arbitraryRequest(op: Op): fc.Arbitrary<Req> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const fieldList = op.body ? fields(doc, op.body) : [];
  const base = op.body ? sample(doc, op.body, known) : undefined;
  const anyString = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constantFrom(...BAD_QUERY));
  const idArb = (name: string) => fc.oneof(fc.constant(pathValues[name] ?? 'x'), fc.uuid(), anyString.filter((s) => s.length > 0));
  const bodyArb: fc.Arbitrary<unknown> = !op.body ? fc.constant(undefined) : fc.oneof(
    { weight: 1, arbitrary: fc.jsonValue() },
    {
      weight: 4,
      arbitrary: (fieldList.length === 0 ? fc.constant([] as Array<[string[], unknown]>) : fc.array(fc.tuple(fc.constantFrom(...fieldList.map((f) => f.path)), fc.oneof(fc.jsonValue(), anyString, fc.constantFrom(...AMOUNTS), fc.constantFrom(...DATES))), { maxLength: 4 }))
        .map((changes) => changes.reduce<unknown>((b, [p, v]) => setAt(b, p, v), base)),
    },
  );
  return fc.record({
    ids: fc.tuple(...pathParams.map((p) => idArb(p.name))),
    query: fc.array(fc.tuple(fc.constantFrom('limit', 'cursor', ...queryParams.map((q) => q.name)), anyString), { maxLength: 3 }),
    body: bodyArb,
  }).map(({ ids, query, body }) => {
    const values = { ...pathValues };
    pathParams.forEach((p, i) => { values[p.name] = ids[i] as string; });
    let path: string;
    try { path = fillPath(op.path, values); } catch { path = fillPath(op.path, pathValues); } // a lone surrogate
    let q = '';
    try { q = query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'); } catch { q = ''; }
    return { op, what: `fast-check ${JSON.stringify({ ids, query }).slice(0, 120)} body ${JSON.stringify(body)?.slice(0, 120)}`, path, query: q, ...(body !== undefined ? { body } : {}) };
  });
}

t.comment(`hostile input: seed ${SEED} (FUZZ_SEED to replay), ${RUNS_PER_OP} fast-check runs per operation${SOAK ? ' (SOAK)' : ''}, ${ops.length} operations, ${dbLabel}`);

t.test('deterministic mutations of every operation', async (t) => {
  for (const op of ops) {
    const before = fiveXX.length + malformed.length;
    await sendAll(mutations(op));
    for (const m of headerMutations(op)) {
      const what = `${op.method} ${op.path} [${m.what}]`;
      try {
        const r = await rawRequest(h.url, m.head(authHeaders(op)), Buffer.from(m.body ?? '', 'latin1'), { noHost: m.noHost });
        check(what, r.status, r.body);
      } catch (err) {
        check(what, 0, failureOf(err));
      }
    }
    t.equal(fiveXX.length + malformed.length - before, 0, `${op.method} ${op.path}`);
  }
});

t.test('fast-check: random requests shaped by the schema', async (t) => {
  for (const op of ops) {
    await fc.assert(fc.asyncProperty(arbitraryRequest(op), async (r) => { await send(r); }), { seed: SEED, numRuns: RUNS_PER_OP, endOnFailure: true });
  }
  t.pass(`${ops.length} operations`);
});

t.test('no 5xx, every error matches the Error schema', async (t) => {
  t.same(fiveXX.slice(0, 30), [], '5xx answers');
  t.same(malformed.slice(0, 30), [], 'error bodies outside the Error schema');
  t.ok(sent > 2000, `${sent} requests sent`);
  t.comment(`hostile input: ${sent} requests, 5xx=${fiveXX.length}, malformed error bodies=${malformed.length} (statuses ${JSON.stringify(Object.fromEntries([...byStatus].sort((a, b) => a[0] - b[0])))})`);
});


