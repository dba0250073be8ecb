// Provider secrets never logged (issue 41 point 7, CONTRACT §15): the service runs with MTN MoMo and
// pawaPay credentials of distinctive values, at the most verbose log level, and drives payins
// through each provider's simulator: completed by polling and by callbacks (MTN's, sent to the
// X-Callback-Url under PUBLIC_BASE_URL; pawaPay's, signed and forged), failed with the provider's
// code, refused (a documented 4xx), in doubt (a 500 after recording, a time-out), unreachable, an
// expired MTN token refreshed, a refund through MTN's Disbursements. Then no log line may carry a
// subscription key, an API key, the Basic credential made of them, the pawaPay token or any access
// token MTN issued. Every log line is captured as written (test/logs.secrets.e2e.test.ts does the
// same for the merchant-side secrets).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { logLines } from './helpers/log-lines.ts';
import { providerEnv, setRouting } from './helpers/providers.ts';
import { startTestApp, request } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { startMtnMomoSimulator } from './simulators/mtn-momo.ts';
import { PawapaySimulator } from './simulators/pawapay.ts';

const { stream: logStream, lines } = logLines();

// Distinctive values, found by a plain substring search wherever they would land in a line.
const collection = { subscriptionKey: 'mtnColSubKey7Q2wX9vB4nL6', apiUser: '5f0c8a6e-3b1d-4e2a-9c7f-1a2b3c4d5e6f', apiKey: 'mtnColApiKey3Hk8Zp1Rt5Wm' };
const disbursement = { subscriptionKey: 'mtnDisSubKey8Jd3Vc6Ny2Qs', apiUser: '6a1d9b7f-4c2e-4f3b-8d8a-2b3c4d5e6f70', apiKey: 'mtnDisApiKey4Gt9Xe2Lp7Uk' };
const PAWAPAY_TOKEN = 'eyJpawaPayToken.9fK2mQ7xR4tV8wY1zB5nC3.sig';

// PUBLIC_BASE_URL must be known before the app starts (and so its port): a relay on a port of its
// own forwards MTN's callbacks to the app once it listens.
let appUrl = '';
const relay = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    fetch(appUrl + (req.url ?? '/'), { method: req.method, headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') }, ...(body.length > 0 ? { body } : {}) })
      .then(async (r) => res.writeHead(r.status).end(await r.text()))
      .catch(() => res.writeHead(502).end());
  });
});
await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));

const signing = (() => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { keyId: 'HTTP_EC_P256_KEY:1', privateKey, publicKey };
})();
const mtn = await startMtnMomoSimulator({ collection, disbursement, targetEnvironment: 'sandbox', currency: 'EUR', callbacks: 'PUT' });
const pawapay = await PawapaySimulator.start({ token: PAWAPAY_TOKEN, signing, autoSettle: false });
const h = await startTestApp({
  env: {
    LOG_LEVEL: 'trace',
    PUBLIC_BASE_URL: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    ...providerEnv({ mtnUrl: mtn.url, mtn: { collection, disbursement }, pawapayUrl: pawapay.baseUrl, pawapayToken: PAWAPAY_TOKEN, timeoutMs: 500 }),
  },
  logStream,
});
appUrl = h.url;
t.teardown(async () => {
  await h.stop();
  await mtn.down();
  await pawapay.close();
  await new Promise<void>((r) => relay.close(() => r()));
});
const s = h.app.services;

const routing = (code: string, providers: string[]) => setRouting(h, code, providers);
const m = await h.newMerchant('Provider secrets');
const customer = await newCustomer(h, m, 'CM', '+237670000001');
async function payin(operator: string, phone: string): Promise<string> {
  const q = await quote(h, m, 'payin', leg(operator, 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', operator, phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  return p.body.id as string;
}
const providerOf = async (reference: string) => ((await s.knex('provider_legs').where({ reference }).first('provider')) as { provider: string } | undefined)?.provider;

t.test('payins, a refund and callbacks through MTN MoMo', async (t) => {
  await routing('CM_MTN_MOMO', ['mtn_momo']);
  const done = await payin('CM_MTN_MOMO', '+237670000301');
  t.equal((await settled(h, m, 'payins', done)).status, 'completed');
  await mtn.flushCallbacks();
  const sent = mtn.callbacks.filter((c) => c.url.endsWith(`/providers/mtn_momo/callbacks/${done}`));
  t.ok(sent.some((c) => c.status === 200), `MTN's callback answered 200 through PUBLIC_BASE_URL (${JSON.stringify(sent.map((c) => c.status ?? c.error))})`);

  mtn.plan('237670000302', { status: 'FAILED', reason: 'APPROVAL_REJECTED' });
  const declined = await settled(h, m, 'payins', await payin('CM_MTN_MOMO', '+237670000302'));
  t.match(declined, { status: 'failed', failure_reason: 'payer_declined' });

  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 400, body: { code: 'NOT_ALLOWED', message: 'not allowed' }, record: false });
  t.equal((await settled(h, m, 'payins', await payin('CM_MTN_MOMO', '+237670000303'))).status, 'failed', 'refused (4xx): not taken, no other provider');

  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 500, record: true });
  t.equal((await settled(h, m, 'payins', await payin('CM_MTN_MOMO', '+237670000304'))).status, 'completed', 'in doubt (500 after recording), settled by status');

  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, record: false });
  t.equal((await settled(h, m, 'payins', await payin('CM_MTN_MOMO', '+237670000305'))).status, 'completed', 'in doubt (time-out), initiated again');

  mtn.expireTokens();
  t.equal((await settled(h, m, 'payins', await payin('CM_MTN_MOMO', '+237670000306'))).status, 'completed', 'an expired token refreshed');
  // Refused for a while: a status check of another leg may ask for a token first and meet a refusal too.
  mtn.fault({ method: 'POST', path: '/collection/token/', status: 401, body: { error: 'login_failed' }, times: 20 });
  mtn.expireTokens();
  const noToken = await payin('CM_MTN_MOMO', '+237670000307');
  t.equal((await settled(h, m, 'payins', noToken)).status, 'failed', 'a token refused: the leg was never sent');
  mtn.clearFaults();

  const r = await h.as(m, 'POST', '/refunds', { payin_id: done, amount: '1000' }, { idem: true });
  t.equal(r.status, 201, r.text);
  await until('the refund settled', async () => ['completed', 'failed'].includes((await h.as(m, 'GET', `/refunds/${r.body.id}`)).body.status));
  t.equal(await providerOf(r.body.id), 'mtn_momo', 'the refund went through MTN\'s Disbursements');

  await mtn.down();
  await routing('CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  const failedOver = await payin('CM_MTN_MOMO', '+237670000308');
  await until('pawaPay has the failed-over leg', async () => pawapay.transaction('deposits', failedOver));
  await mtn.up();
  pawapay.settle('deposits', failedOver);
  t.equal((await settled(h, m, 'payins', failedOver)).status, 'completed', 'MTN unreachable: failed over to pawaPay');
});

t.test('payins and callbacks through pawaPay', async (t) => {
  await routing('CM_ORANGE_MOMO', ['pawapay']);
  const callbacks = `${h.url}/providers/pawapay/callbacks`;
  const done = await payin('CM_ORANGE_MOMO', '+237693456789');
  await until('pawaPay has the deposit', async () => pawapay.transaction('deposits', done));
  pawapay.settle('deposits', done);
  t.equal(await pawapay.sendCallback('deposits', done, callbacks, 'wrong-key'), 200, 'a forged callback: answered, ignored');
  t.equal(await pawapay.sendCallback('deposits', done, callbacks, 'signed'), 200, 'a signed callback');
  t.equal((await settled(h, m, 'payins', done)).status, 'completed');

  const declined = await payin('CM_ORANGE_MOMO', '+237693456039');
  await until('pawaPay has the deposit', async () => pawapay.transaction('deposits', declined));
  pawapay.settle('deposits', declined);
  t.equal(await pawapay.sendCallback('deposits', declined, callbacks, 'unsigned'), 200);
  t.match(await settled(h, m, 'payins', declined), { status: 'failed', failure_reason: 'payer_declined', provider_failure: { provider: 'pawapay', code: 'PAYMENT_NOT_APPROVED' } });

  pawapay.failNextInitiation('error');
  const doubted = await payin('CM_ORANGE_MOMO', '+237693456790');
  await until('pawaPay has the deposit', async () => pawapay.transaction('deposits', doubted));
  pawapay.settle('deposits', doubted);
  t.equal((await settled(h, m, 'payins', doubted)).status, 'completed', 'in doubt (500 after recording), settled by status');

  t.equal((await request(h.url, 'POST', '/providers/pawapay/callbacks', { body: { nothing: 'here' } })).status, 400, 'a callback that is not well-formed');
  await pawapay.down();
  const unreachable = await payin('CM_ORANGE_MOMO', '+237693456791');
  t.equal((await settled(h, m, 'payins', unreachable)).status, 'failed', 'pawaPay unreachable: no provider took it');
  await pawapay.up();
});

t.test('no log line carries a provider credential or an access token', async (t) => {
  const accessTokens = new Set<string>();
  for (const r of mtn.requests) {
    const bearer = /^Bearer (.+)$/.exec(String(r.headers.authorization ?? ''))?.[1];
    if (bearer) accessTokens.add(bearer);
  }
  t.ok(accessTokens.size >= 3, `${accessTokens.size} MTN access tokens were used (both products, and one refreshed)`);
  const basic = (c: { apiUser: string; apiKey: string }) => Buffer.from(`${c.apiUser}:${c.apiKey}`).toString('base64');
  const secrets: Record<string, string> = {
    'MTN Collections subscription key': collection.subscriptionKey,
    'MTN Collections API key': collection.apiKey,
    'MTN Collections Basic credential': basic(collection),
    'MTN Disbursements subscription key': disbursement.subscriptionKey,
    'MTN Disbursements API key': disbursement.apiKey,
    'MTN Disbursements Basic credential': basic(disbursement),
    'pawaPay API token': PAWAPAY_TOKEN,
    ...Object.fromEntries([...accessTokens].map((tok, i) => [`MTN access token ${i + 1}`, tok])),
  };
  // The provider paths were taken and logged: the lines searched are the ones that could leak.
  for (const msg of ['provider did not take the leg: trying the next one', 'leg initiation in doubt: its status will be asked', 'provider callback ignored']) {
    t.ok(lines.some((l) => l.includes(`"msg":"${msg}"`)), `logged: ${msg}`);
  }
  t.ok(lines.some((l) => l.includes('/providers/mtn_momo/callbacks/')) && lines.some((l) => l.includes('/providers/pawapay/callbacks')), 'callback requests logged');
  t.ok(lines.length > 100, `${lines.length} lines logged at trace`);
  for (const [what, value] of Object.entries(secrets)) {
    const hits = lines.filter((l) => l.includes(value));
    t.same(hits, [], `no log line carries the ${what}`);
  }
});
