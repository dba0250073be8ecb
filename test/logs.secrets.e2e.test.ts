// Logs (issue 2 point 4, CONTRACT.md §3): every request is logged once with its request id, and no
// log line ever carries an API secret, the full API key, the webhook signing secret, the operator
// token or a payin's OTP, at the most verbose level, across the operator API, payments settled by
// the workers (the OTP handed to the provider), webhook deliveries and refused requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { logLines } from './helpers/log-lines.ts';
import { startTestApp, request, ADMIN_TOKEN, type HttpResult } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { createLogger } from '../infra/log.ts';

const capture = logLines;

t.test('the logger redacts secret fields wherever a log call puts them', async (t) => {
  const { stream, lines } = capture();
  const log = createLogger('trace', stream);
  log.info({ api_secret: 'sk_top', otp: '48151623', signing_secret: 'whsec_top', password: 'pw_top', token: 'tok_top' }, 'top level');
  log.info({ key: { api_secret: 'sk_nested', secret: 'sec_nested' }, payin: { otp: '27182818' }, webhook: { signing_secret: 'whsec_nested' } }, 'nested');
  log.info({ req: { headers: { 'x-api-secret': 'sk_header', authorization: 'Bearer tok_header', cookie: 'sid=cookie_val' } } }, 'headers');
  log.child({ request_id: 'r-1' }).warn({ otp: '31415926' }, 'child');
  await new Promise((r) => setImmediate(r));
  t.equal(lines.length, 4);
  const all = lines.join('\n');
  for (const secret of ['sk_top', '48151623', 'whsec_top', 'pw_top', 'tok_top', 'sk_nested', 'sec_nested', '27182818', 'whsec_nested', 'sk_header', 'tok_header', 'cookie_val', '31415926']) {
    t.notOk(all.includes(secret), `${secret} is not logged`);
  }
  t.match(JSON.parse(lines[0]!), { api_secret: '[redacted]', otp: '[redacted]', msg: 'top level' }, 'the field stays, its value is censored');
  t.match(JSON.parse(lines[3]!), { request_id: 'r-1', otp: '[redacted]' });
});

t.test('a running service: request ids on every request line, no secret in any line', async (t) => {
  const { stream, lines } = capture();
  const h = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logStream: stream });
  t.teardown(() => h.stop());

  // A webhook receiver, so deliveries (signed with the signing secret) are attempted and logged.
  const received: string[] = [];
  const receiver = http.createServer((req, res) => {
    req.resume();
    received.push(String(req.headers['x-service-webhook-id'] ?? ''));
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => receiver.close(() => r())));

  const answers: HttpResult[] = [];
  const track = (r: HttpResult) => {
    answers.push(r);
    return r;
  };

  const m = await h.newMerchant('Logged');
  const rotated = track(await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${m.keyId}/rotate`, { grace_seconds: 600 }));
  t.equal(rotated.status, 201);
  const second = track(await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, {}));
  t.equal(second.status, 201);
  const hook = track(await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` }));
  t.equal(hook.status, 200);

  // Refused requests: a wrong secret, an unknown key, a bad operator token, a body that breaks the schema.
  track(await h.as({ ...m, apiSecret: `${m.apiSecret}x` }, 'GET', '/wallets'));
  track(await h.as({ ...m, apiKey: `${m.apiKey}x` }, 'GET', '/wallets'));
  track(await request(h.url, 'GET', `/admin/merchants/${m.merchantId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } }));
  track(await h.as(m, 'POST', '/customers', { first_name: 'Awa', api_secret: m.apiSecret }, { idem: true }));
  track(await h.as(m, 'GET', '/operators', undefined, { headers: { 'x-request-id': 'client-chosen-id-1' } }));

  // A payin that needs an OTP (SN_ORANGE_MOMO): refused without it, then collected with it.
  const OTP = '61803398';
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  const q = await quote(h, m, 'payin', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '5000'));
  const src = party('SN', 'SN_ORANGE_MOMO', '+221770000001');
  const noOtp = track(await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: src }, { idem: true }));
  t.equal(noOtp.body.error?.code, 'otp_required');
  const shortOtp = track(await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: src, otp: `${OTP}1` }, { idem: true }));
  t.equal(shortOtp.status, 400, 'a 9-digit OTP is refused by the schema');
  const p = track(await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: src, otp: OTP }, { idem: true }));
  t.equal(p.status, 201);
  t.equal((await settled(h, m, 'payins', p.body.id)).status, 'completed', 'the OTP went to the provider');
  await until('the webhook delivered', async () => received.length > 0);

  const secrets: Record<string, string> = {
    'api secret': m.apiSecret,
    'rotated api secret': rotated.body.api_secret,
    'second api secret': second.body.api_secret,
    'full api key': m.apiKey,
    'second full api key': second.body.api_key,
    'signing secret': hook.body.signing_secret,
    'operator token': ADMIN_TOKEN,
    otp: OTP,
  };
  // Every answer's request line, and the delivery's attempt line, written (the logger writes them
  // as the service goes: the attempt's once its outcome is recorded, after the receiver answered).
  await until('a request line for every answer, and the webhook attempt line', async () => lines.some((l) => l.includes('"msg":"webhook attempt"'))
    && answers.every((a) => lines.some((l) => l.includes(`"request_id":"${a.headers.get('x-request-id')}"`))));
  t.ok(lines.length > answers.length, `${lines.length} lines logged`);
  for (const [what, value] of Object.entries(secrets)) {
    t.ok(value && value.length >= 8, `${what} is known`);
    const hits = lines.filter((l) => l.includes(value));
    t.same(hits, [], `no log line carries the ${what}`);
  }

  // One request line per answer, with the answer's X-Request-Id, method, path and status.
  const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
  for (const l of requestLines) t.match(l, { request_id: /^[A-Za-z0-9._-]{1,100}$/, method: String, path: String, status: Number }, 'a request line has its id');
  for (const a of answers) {
    const id = a.headers.get('x-request-id');
    t.ok(id, 'the answer has a request id');
    const mine = requestLines.filter((l) => l.request_id === id);
    t.equal(mine.length, 1, `one request line for ${id} (${a.status})`);
    t.equal(mine[0]?.status, a.status);
  }
  t.ok(requestLines.some((l) => l.request_id === 'client-chosen-id-1' && l.path === '/operators'), 'a sane client request id is the one logged');
});
