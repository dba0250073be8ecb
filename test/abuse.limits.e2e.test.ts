// Abuse limits (issue 9 point 6), beside test/api.conventions.e2e.test.ts (per-key 429 with
// Retry-After, failed authentications per key) and test/slowloris.e2e.test.ts: page size on every list
// of the document, body size, header size, JSON depth (10,000 levels: a 400, not a crash), the
// request time-outs of the HTTP server, and failed authentications throttled per client address
// across many keys. Every refusal carries the contract's error body.
import t from 'tap';
import net from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestApp, request, ADMIN_TOKEN } from './helpers/app.ts';
import { operations } from './helpers/openapi-walk.ts';
import { rawRequest } from './helpers/raw-http.ts';

const h = await startTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: '1500', HTTP_REQUEST_TIMEOUT_MS: '2500' } });
t.teardown(() => h.stop());
const doc = (await request(h.url, 'GET', '/openapi.json')).body;
const isError = new Ajv2020({ strict: false }).compile(doc.components.schemas.Error);
const m = await h.newMerchant('Limits');
const auth = (op: { auth: string }): Record<string, string> => (op.auth === 'admin' ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret });
const figures: string[] = [];

t.test('page size: limit above 100 is refused on every list of the document', async (t) => {
  const lists = operations(doc).filter((o) => o.method === 'GET' && o.params.some((p) => p.in === 'query' && p.name === 'limit') && !o.params.some((p) => p.in === 'path'));
  t.ok(lists.length >= 6, `${lists.length} lists`);
  for (const op of lists) {
    const max = op.params.find((p) => p.name === 'limit')!.schema?.maximum;
    t.ok(typeof max === 'number' && max <= 1000, `${op.path}: limit has a maximum (${max})`);
    const over = await request(h.url, 'GET', `${op.path}?limit=${max + 1}`, { headers: auth(op) });
    t.equal(over.status, 400, `${op.path}?limit=${max + 1}`);
    t.ok(isError(over.body) && (over.body as any).error.details?.some((d: any) => d.field === 'query.limit'), 'names query.limit');
    t.equal((await request(h.url, 'GET', `${op.path}?limit=${max}`, { headers: auth(op) })).status, 200, `${op.path}?limit=${max}`);
  }
  figures.push(`page size: ${lists.length} lists refuse limit > max`);
});

t.test('body size: 413 payload_too_large with the error body, nothing created', async (t) => {
  const before = (await h.as(m, 'GET', '/customers?limit=100')).body.data.length;
  const big = await h.as(m, 'POST', '/customers', { first_name: 'A', last_name: 'B', external_ref: 'x', metadata: { pad: 'x'.repeat(300_000) } }, { idem: true });
  t.equal(big.status, 413);
  t.ok(isError(big.body));
  t.equal(big.body.error.code, 'payload_too_large');
  t.equal((await h.as(m, 'GET', '/customers?limit=100')).body.data.length, before);
  figures.push('body > 256 KiB → 413');
});

t.test('header size: 431 with the error body, the server keeps serving', async (t) => {
  const r = await rawRequest(h.url, `GET /operators HTTP/1.1\r\nx-api-key: ${m.apiKey}\r\nx-api-secret: ${m.apiSecret}\r\nx-pad: ${'p'.repeat(20_000)}`);
  t.equal(r.status, 431);
  t.ok(isError(JSON.parse(r.body)), r.body);
  t.ok(r.headers['x-request-id'], 'a request id');
  t.equal((await h.as(m, 'GET', '/operators')).status, 200);
  figures.push('headers > 16 KiB → 431');
});

t.test('JSON depth: 10,000 levels is a 400, not a stack overflow', async (t) => {
  for (const depth of [33, 1_000, 10_000]) {
    const raw = `{"name":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const r = await request(h.url, 'POST', '/admin/merchants', { raw, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' } });
    t.equal(r.status, 400, `depth ${depth}`);
    t.ok(isError(r.body));
  }
  const ok = await request(h.url, 'POST', '/admin/merchants', { body: { name: 'Shallow' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(ok.status, 201);
  figures.push('JSON depth > 32 → 400');
});

t.test('request time-outs: the server holds its limits, a body never finished gets 408', async (t) => {
  const server = h.app.server!;
  t.equal(server.headersTimeout, 1500);
  t.equal(server.requestTimeout, 2500);
  const { hostname, port } = new URL(h.url);
  const started = Date.now();
  const answer = await new Promise<string>((resolve) => {
    const s = net.connect(Number(port), hostname);
    let text = '';
    s.on('data', (c: Buffer) => { text += c.toString('utf8'); });
    s.on('close', () => resolve(text));
    s.on('error', () => undefined);
    // Headers complete, a body announced and never sent.
    s.write(`POST /admin/merchants HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`);
  });
  const waited = Date.now() - started;
  t.match(answer, /^HTTP\/1\.1 408 /, '408');
  t.ok(isError(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))), 'with the error body');
  t.ok(waited >= 2400 && waited < 8000, `closed after ${waited} ms (request time-out 2500 ms)`);
  figures.push(`unfinished body closed with 408 after ${waited} ms`);
});

t.test('failed authentications are throttled per client address, across keys', async (t) => {
  // Its own service: the block covers the whole address (127.0.0.1) for the window.
  const own = await startTestApp({ env: { AUTH_FAILURES_PER_WINDOW: '2', AUTH_FAILURE_WINDOW_SECONDS: '60' } });
  t.teardown(() => own.stop());
  const good = await own.newMerchant('Honest');
  // Per key the limit is 2; per address 5 × 2. Ten guesses, each with another made-up key.
  const guesses: number[] = [];
  for (let i = 0; i < 10; i++) guesses.push((await own.as({ ...good, apiKey: `pk_guess_${i}`, apiSecret: 'sk_guess' }, 'GET', '/wallets')).status);
  t.same(guesses, Array(10).fill(401), 'each new key gets its own 401 until the address limit');
  const blocked = await own.as({ ...good, apiKey: 'pk_guess_new', apiSecret: 'sk_guess' }, 'GET', '/wallets');
  t.equal(blocked.status, 429, 'the address is throttled, whatever key it tries');
  t.equal(blocked.body.error.code, 'rate_limited');
  t.ok(Number(blocked.headers.get('retry-after')) > 0, 'Retry-After');
  const honest = await own.as(good, 'GET', '/wallets');
  t.equal(honest.status, 429, 'even valid credentials from that address wait: guessing gains nothing');
  const operator = await own.admin('GET', `/admin/merchants/${good.merchantId}`);
  t.equal(operator.status, 429, 'the operator API shares the address limit');
  figures.push('failed auth per address: 10 failures with 10 keys → 429 for the address');
});

t.test('figures', async (t) => {
  t.comment(`abuse limits: ${figures.join('; ')}`);
  t.pass();
});
