// API conventions (issue 2 point 4) and abuse limits (issue 9 point 6): error bodies, request ids,
// 404/413/415, JSON depth, 500 without internals, rate limiting and failed-auth throttling.
import t from 'tap';
import { startTestApp, request } from './helpers/app.ts';
import { ManualClock } from '../infra/clock.ts';

// The rate limiter's buckets refill by the service's clock: held still here, so the burst and the
// refill are what the test says, not what a slow machine's pace between requests refilled (at 5 per
// second, requests 200 ms apart under load never ran out: issue 45).
const clock = new ManualClock();
const h = await startTestApp({ clock, env: { RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '5', AUTH_FAILURES_PER_WINDOW: '3', AUTH_FAILURE_WINDOW_SECONDS: '60' } });
t.teardown(() => h.stop());

const isErrorBody = (b: any) => b && typeof b.error?.code === 'string' && typeof b.error?.message === 'string';

t.test('unknown routes, wrong methods: 404 with the error body and a request id', async (t) => {
  for (const [m, p] of [['GET', '/nope'], ['DELETE', '/admin/merchants'], ['GET', '/payins']] as const) {
    const r = await request(h.url, m, p === '/payins' ? '/no/such/thing' : p);
    t.equal(r.status, 404, `${m} ${p}`);
    t.ok(isErrorBody(r.body));
    t.equal(r.body.error.code, 'not_found');
    t.ok(r.headers.get('x-request-id'));
  }
});

t.test('X-Request-Id is echoed when sane, replaced when not', async (t) => {
  const mine = await request(h.url, 'GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
  t.equal(mine.headers.get('x-request-id'), 'abc-123');
  const bad = await request(h.url, 'GET', '/healthz', { headers: { 'x-request-id': 'x'.repeat(500) } });
  t.not(bad.headers.get('x-request-id'), 'x'.repeat(500));
});

t.test('bodies: 415 for non-JSON, 413 when too large, 400 for broken or too deep JSON', async (t) => {
  const auth = { authorization: 'Bearer test-admin-token-0123456789' };
  const text = await request(h.url, 'POST', '/admin/merchants', { raw: 'name=x', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(text.status, 415);
  t.equal(text.body.error.code, 'unsupported_media_type');
  const big = await request(h.url, 'POST', '/admin/merchants', { raw: JSON.stringify({ name: 'x'.repeat(300_000) }), headers: { ...auth, 'content-type': 'application/json' } });
  t.equal(big.status, 413);
  t.equal(big.body.error.code, 'payload_too_large');
  const broken = await request(h.url, 'POST', '/admin/merchants', { raw: '{"name": ', headers: { ...auth, 'content-type': 'application/json' } });
  t.equal(broken.status, 400);
  t.equal(broken.body.error.code, 'bad_request');
  let deep: unknown = 'x';
  for (let i = 0; i < 100; i++) deep = { a: deep };
  const tooDeep = await request(h.url, 'POST', '/admin/merchants', { body: { name: 'x', deep }, headers: auth });
  t.equal(tooDeep.status, 400);
  t.ok(isErrorBody(tooDeep.body));
});

t.test('schema errors list every problem with its field', async (t) => {
  const r = await h.admin('POST', '/admin/merchants', { nme: 'typo' });
  t.equal(r.status, 400);
  t.same(r.body.error.details.map((d: any) => d.field).sort(), ['name', 'nme']);
});

t.test('a 500 shows no internals', async (t) => {
  const store = h.app.services.store;
  const original = store.append.bind(store);
  store.append = async () => { throw new Error('secret internal detail: relation "events" at 10.0.0.5'); };
  try {
    const r = await h.admin('POST', '/admin/merchants', { name: 'x' });
    t.equal(r.status, 500);
    t.same(Object.keys(r.body.error).sort(), ['code', 'message', 'request_id']);
    t.equal(r.body.error.code, 'internal_error');
    t.notMatch(r.text, /secret internal detail|10\.0\.0\.5|at .*\.ts/);
  } finally {
    store.append = original;
  }
});

t.test('per-key rate limit: 429 rate_limited with Retry-After, other keys unaffected, refilled with time', async (t) => {
  const a = await h.newMerchant('A');
  const b = await h.newMerchant('B');
  const calls = async (n: number) => {
    const codes: number[] = [];
    for (let i = 0; i < n; i++) codes.push((await h.as(a, 'GET', '/operators')).status);
    return codes;
  };
  t.same(await calls(5), [200, 200, 200, 200, 200], 'the burst passes');
  const limited = await h.as(a, 'GET', '/operators');
  t.equal(limited.status, 429, 'the sixth call at the same instant is refused');
  t.equal(limited.body?.error?.code, 'rate_limited');
  t.equal(limited.headers.get('retry-after'), '1', 'Retry-After in whole seconds (a token every 200 ms)');
  t.equal((await h.as(b, 'GET', '/operators')).status, 200, 'another key has its own bucket');
  clock.advance(200);
  t.same(await calls(2), [200, 429], '200 ms later: one token more, and only one');
  clock.advance(10_000);
  t.same(await calls(6), [200, 200, 200, 200, 200, 429], 'after a long pause: the burst again, never more');
});

t.test('failed authentications are throttled per key, even with the right secret afterwards', async (t) => {
  const m = await h.newMerchant('Guessing');
  for (let i = 0; i < 3; i++) t.equal((await h.as({ ...m, apiSecret: `sk_guess_${i}` }, 'GET', '/operators')).status, 401);
  const blocked = await h.as(m, 'GET', '/operators');
  t.equal(blocked.status, 429, 'blocked after 3 failures');
  t.ok(Number(blocked.headers.get('retry-after')) > 0);
});
