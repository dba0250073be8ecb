// Idempotency (CONTRACT.md §6), exercised through POST /customers: replay, conflicts, key rules,
// concurrency, what is stored and what is not, per-merchant scope, 24-hour expiry.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startTestApp, request, type MerchantCreds } from './helpers/app.ts';
import { until } from './helpers/money.ts';
import { ManualClock } from '../infra/clock.ts';
import { createHttpApp } from '../api/server.ts';
import { customersModule } from '../api/routes/customers.ts';
import type { ApiModule } from '../api/module.ts';
import { DomainError } from '../domain/errors.ts';
import { requestHash, unkeyedRequestHash } from '../commands/idempotency.ts';
import { body, errors, idempotencyHeader, json } from '../api/openapi/common.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
const h = await startTestApp({ clock });
t.teardown(() => h.stop());

const person = (first = 'Awa') => ({ first_name: first, last_name: 'Diop', phone: '+221771234567', metadata: { a: '1', b: '2' } });
const post = (m: MerchantCreds, b: unknown, key: string) => h.as(m, 'POST', '/customers', b, { idem: key });
const withoutMeta = (b: any) => {
  const { _meta, ...rest } = b;
  return rest;
};
const customerCount = async (m: MerchantCreds) => {
  const r = await h.as(m, 'GET', '/customers?limit=100');
  return r.body.data.length as number;
};
const auth = (m: MerchantCreds) => ({ 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret });

// A second HTTP front on the same services, with test-only idempotent operations: another path for
// the "same key, other path" rule, and a handler that refuses with a business code (customers have
// no business refusal).
let refusals = 0;
const probeModule: ApiModule = {
  paths: {
    '/probe/refusals': {
      post: {
        'x-auth': 'merchant', 'x-scope': 'customers:write', 'x-idempotent': true, operationId: 'probeRefusal', parameters: [idempotencyHeader],
        requestBody: body({ type: 'object', properties: { amount: { type: 'string' } } }),
        responses: { 201: json({ type: 'object' }), 400: errors[400] },
      },
    },
    '/probe/slow': {
      post: {
        'x-auth': 'merchant', 'x-scope': 'customers:write', 'x-idempotent': true, operationId: 'probeSlow', parameters: [idempotencyHeader],
        requestBody: body({ type: 'object', properties: { n: { type: 'string' } } }),
        responses: { 201: json({ type: 'object' }), 409: errors[409] },
      },
    },
  },
  handlers: {
    probeRefusal: async () => {
      refusals++;
      throw new DomainError('insufficient_balance', 'The wallet holds too little');
    },
    probeSlow: async () => {
      await slowGate.promise;
      return { status: 201, body: { answered_by: 'the first attempt' } };
    },
  },
};
/** Holds /probe/slow's handler until the test opens it. */
let slowGate = gate();
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}
const probeServer = http.createServer(createHttpApp(h.app.services, [customersModule, probeModule]).app);
await new Promise<void>((r) => probeServer.listen(0, '127.0.0.1', () => r()));
t.teardown(() => new Promise<void>((r) => probeServer.close(() => r())));
const probeUrl = `http://127.0.0.1:${(probeServer.address() as AddressInfo).port}`;

t.test('a replay answers the stored result: same status, same body, plus _meta replayed', async (t) => {
  const m = await h.newMerchant('Replay');
  const first = await post(m, person(), 'replay-1');
  t.equal(first.status, 201);
  t.same(first.body._meta, { idempotency_key: 'replay-1', idempotency_replayed: false });
  for (let i = 0; i < 2; i++) {
    const again = await post(m, person(), 'replay-1');
    t.equal(again.status, 201);
    t.same(withoutMeta(again.body), withoutMeta(first.body), 'the same body');
    t.same(again.body._meta, { idempotency_key: 'replay-1', idempotency_replayed: true });
  }
  t.equal(await customerCount(m), 1, 'one customer');
});

t.test('the same key with another body is 409 idempotency_conflict, and the stored result stays', async (t) => {
  const m = await h.newMerchant('Conflict');
  const first = await post(m, person(), 'conflict-1');
  const other = await post(m, person('Fatou'), 'conflict-1');
  t.equal(other.status, 409);
  t.equal(other.body.error.code, 'idempotency_conflict');
  const extraField = await post(m, { ...person(), city: 'Dakar' }, 'conflict-1');
  t.equal(extraField.status, 409, 'an added field is another body');
  const again = await post(m, person(), 'conflict-1');
  t.equal(again.status, 201);
  t.equal(again.body.id, first.body.id);
  t.equal(await customerCount(m), 1);
});

t.test('key order and whitespace do not matter: the body is compared as parsed JSON', async (t) => {
  const m = await h.newMerchant('Canonical');
  const first = await request(h.url, 'POST', '/customers', {
    raw: '{"first_name":"Awa","last_name":"Diop","phone":"+221771234567","metadata":{"a":"1","b":"2"}}',
    headers: { ...auth(m), 'content-type': 'application/json', 'idempotency-key': 'canonical-1' },
  });
  t.equal(first.status, 201);
  const reordered = await request(h.url, 'POST', '/customers', {
    raw: '{\n  "metadata" : { "b" : "2", "a" : "1" },\n\t"phone": "+221771234567",  "last_name":"Diop" ,\n "first_name" : "Awa"\n}\n',
    headers: { ...auth(m), 'content-type': 'application/json', 'idempotency-key': 'canonical-1' },
  });
  t.equal(reordered.status, 201);
  t.equal(reordered.body._meta.idempotency_replayed, true, 'a replay');
  t.same(withoutMeta(reordered.body), withoutMeta(first.body));
  t.equal(await customerCount(m), 1);
});

t.test('the same key on another path is 409 idempotency_conflict', async (t) => {
  const m = await h.newMerchant('Paths');
  const first = await request(probeUrl, 'POST', '/customers', { body: person(), headers: { ...auth(m), 'idempotency-key': 'path-1' } });
  t.equal(first.status, 201);
  const elsewhere = await request(probeUrl, 'POST', '/probe/refusals', { body: person(), headers: { ...auth(m), 'idempotency-key': 'path-1' } });
  t.equal(elsewhere.status, 409);
  t.equal(elsewhere.body.error.code, 'idempotency_conflict');
  t.equal(refusals, 0, 'the other operation did not run');
});

t.test('a missing key is 400 idempotency_key_required and creates nothing', async (t) => {
  const m = await h.newMerchant('NoKey');
  for (const headers of [auth(m), { ...auth(m), 'idempotency-key': '' }]) {
    const r = await request(h.url, 'POST', '/customers', { body: person(), headers });
    t.equal(r.status, 400);
    t.equal(r.body.error.code, 'idempotency_key_required');
  }
  t.equal(await customerCount(m), 0);
});

t.test('an invalid key is 400: longer than 255, or not printable ASCII', async (t) => {
  const m = await h.newMerchant('BadKey');
  for (const key of ['k'.repeat(256), 'tab\tinside', 'clé']) {
    const r = await post(m, person(), key);
    t.equal(r.status, 400, JSON.stringify(key).slice(0, 30));
    t.equal(r.body.error.code, 'bad_request');
    t.same(r.body.error.details?.map((d: any) => d.field), ['Idempotency-Key']);
  }
  t.equal(await customerCount(m), 0);
  t.equal((await post(m, person(), 'k'.repeat(255))).status, 201, '255 characters is the limit');
  t.equal((await post(m, person('Other'), '~ !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}')).status, 201, 'any printable character');
});

t.test('20 concurrent identical requests: one customer, 201 or 409 in progress, identical bodies', async (t) => {
  const m = await h.newMerchant('Concurrent');
  const answers = await Promise.all(Array.from({ length: 20 }, () => post(m, person(), 'concurrent-1')));
  const created = answers.filter((a) => a.status === 201);
  t.ok(created.length >= 1, `${created.length} answered 201`);
  for (const a of answers) {
    t.ok(a.status === 201 || a.status === 409, `status ${a.status}`);
    if (a.status === 409) t.equal(a.body.error.code, 'idempotency_in_progress');
  }
  t.equal(created.filter((a) => a.body._meta.idempotency_replayed === false).length, 1, 'exactly one ran');
  for (const a of created) t.same(withoutMeta(a.body), withoutMeta(created[0]!.body), 'every 2xx body is the same');
  // Byte for byte: the served text with only `_meta` (first run or replay) taken out.
  const bytes = created.map((a) => JSON.stringify(withoutMeta(JSON.parse(a.text))));
  t.equal(new Set(bytes).size, 1, 'every 2xx body is byte-identical apart from _meta');
  t.comment(`races: 20 concurrent identical requests: ${created.length} 2xx (${new Set(bytes).size} distinct body), ${answers.length - created.length} idempotency_in_progress, effects=${await customerCount(m)}`);
  t.equal(await customerCount(m), 1, 'exactly one customer');
  const after = await post(m, person(), 'concurrent-1');
  t.equal(after.body.id, created[0]!.body.id, 'a later retry replays it');
});

t.test('a request refused by the schema stores nothing: the key then works with a valid body', async (t) => {
  const m = await h.newMerchant('Schema');
  const bad = await post(m, { first_name: 'Awa' }, 'schema-1');
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'bad_request');
  t.notOk(bad.body._meta, 'not an idempotent outcome');
  const good = await post(m, person(), 'schema-1');
  t.equal(good.status, 201);
  t.equal(good.body._meta.idempotency_replayed, false);
});

t.test('a body refused by validation in the handler (phone) stores nothing either', async (t) => {
  const m = await h.newMerchant('Phone');
  const bad = await post(m, { ...person(), phone: '+237677123456', country_code: 'SN' }, 'phone-1');
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.map((d: any) => d.field), ['phone']);
  const fixed = await post(m, { ...person(), country_code: 'SN' }, 'phone-1');
  t.equal(fixed.status, 201, 'the corrected body runs under the same key');
  t.equal(fixed.body.phone, '+221771234567');
});

t.test('a 5xx stores nothing: 500 internal_error without internals, then the retry succeeds', async (t) => {
  const m = await h.newMerchant('Crash');
  const store = h.app.services.store;
  const original = store.append;
  store.append = async () => {
    store.append = original;
    throw new Error('connection to 10.0.0.7 lost: relation "events" secret detail');
  };
  t.teardown(() => { store.append = original; });
  const failed = await post(m, person(), 'crash-1');
  t.equal(failed.status, 500);
  t.equal(failed.body.error.code, 'internal_error');
  t.notMatch(failed.body.error.message, /10\.0\.0\.7|relation|secret|events/);
  t.notOk(failed.body._meta);
  t.equal(await customerCount(m), 0);
  const retry = await post(m, person(), 'crash-1');
  t.equal(retry.status, 201);
  t.equal(retry.body._meta.idempotency_replayed, false, 'it ran again');
  t.equal(await customerCount(m), 1);
});

t.test('a business refusal is an outcome: stored and replayed (test-only operation)', async (t) => {
  const m = await h.newMerchant('Refusal');
  refusals = 0;
  const call = () => request(probeUrl, 'POST', '/probe/refusals', { body: { amount: '5000' }, headers: { ...auth(m), 'idempotency-key': 'refusal-1' } });
  const first = await call();
  t.equal(first.status, 400);
  t.equal(first.body.error.code, 'insufficient_balance');
  t.same(first.body._meta, { idempotency_key: 'refusal-1', idempotency_replayed: false });
  const again = await call();
  t.equal(again.status, 400);
  t.same(again.body.error.code, 'insufficient_balance');
  t.same(again.body.error.message, first.body.error.message);
  t.same(again.body._meta, { idempotency_key: 'refusal-1', idempotency_replayed: true });
  t.equal(refusals, 1, 'the handler ran once');
});

t.test('a replayed refusal is the same body: the first request_id, and the hint to send a new key (issue 31)', async (t) => {
  const m = await h.newMerchant('RefusalBody');
  const call = (requestId: string) => request(probeUrl, 'POST', '/probe/refusals', {
    body: { amount: '5000' }, headers: { ...auth(m), 'idempotency-key': 'refusal-body-1', 'x-request-id': requestId },
  });
  const first = await call('first-request');
  t.equal(first.status, 400);
  t.equal(first.body.error.request_id, 'first-request', 'the first answer names its request');
  t.match(first.body.error.message, /^The wallet holds too little\. .*send the request with a new Idempotency-Key\.$/, 'the message says how to run again');
  const again = await call('second-request');
  t.equal(again.status, 400);
  t.same(withoutMeta(again.body), withoutMeta(first.body), 'the same body, request_id included (CONTRACT.md §6)');
  t.equal(again.body.error.request_id, 'first-request', 'the request that produced the outcome');
  t.equal(again.body.error.code, 'insufficient_balance', 'the code stays');
  t.equal(again.headers.get('x-request-id'), 'second-request', 'X-Request-Id still names this request (CONTRACT.md §5)');
});

t.test('a refusal stored before its request_id was kept replays with the hint and the replay\'s request_id (issue 31)', async (t) => {
  const m = await h.newMerchant('LegacyRefusal');
  const idem = h.app.services.idempotency;
  const body = { amount: '5000' };
  const claim = await idem.claim(m.merchantId, 'legacy-1', 'POST', '/probe/refusals', requestHash(h.app.services.secrets, 'POST', '/probe/refusals', body));
  if (claim.kind !== 'run') throw new Error('expected a fresh claim');
  await idem.complete(claim, 400, { error: { code: 'insufficient_balance', message: 'The wallet holds too little' } });
  const r = await request(probeUrl, 'POST', '/probe/refusals', { body, headers: { ...auth(m), 'idempotency-key': 'legacy-1', 'x-request-id': 'the-replay' } });
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'insufficient_balance');
  t.match(r.body.error.message, /^The wallet holds too little\. .*new Idempotency-Key/);
  t.equal(r.body.error.request_id, 'the-replay', 'never without a request_id');
  t.equal(r.body._meta.idempotency_replayed, true);
});

t.test('keys are scoped to the merchant', async (t) => {
  const a = await h.newMerchant('ScopeA');
  const b = await h.newMerchant('ScopeB');
  const ra = await post(a, person(), 'shared-key');
  const rb = await post(b, person(), 'shared-key');
  t.equal(ra.status, 201);
  t.equal(rb.status, 201);
  t.equal(rb.body._meta.idempotency_replayed, false, 'not a replay of the other merchant\'s request');
  t.not(ra.body.id, rb.body.id, 'two customers');
  t.equal(ra.body.merchant_id, a.merchantId);
  t.equal(rb.body.merchant_id, b.merchantId);
  const rb2 = await post(b, person('Other'), 'shared-key');
  t.equal(rb2.status, 409, 'each merchant\'s key still conflicts within its own scope');
});

t.test('a key is kept 24 hours, then free for a new request', async (t) => {
  const m = await h.newMerchant('Expiry');
  const first = await post(m, person(), 'expiry-1');
  t.equal(first.status, 201);
  clock.advance(24 * 3600 * 1000 - 1000);
  const before = await post(m, person('Later'), 'expiry-1');
  t.equal(before.status, 409, 'one second before 24 hours: still a conflict');
  const replay = await post(m, person(), 'expiry-1');
  t.equal(replay.body._meta.idempotency_replayed, true, 'and still replayed');
  clock.advance(2000);
  const after = await post(m, person('Later'), 'expiry-1');
  t.equal(after.status, 201, '24 hours and 1 second later the key is free');
  t.equal(after.body._meta.idempotency_replayed, false);
  t.not(after.body.id, first.body.id, 'a new customer');
  t.equal(after.body.first_name, 'Later');
  t.equal(await customerCount(m), 2);
});

t.test('an attempt taken over while it ran answers what the key holds, never its own outcome (CONTRACT §17)', async (t) => {
  const m = await h.newMerchant('TakenOver');
  const idem = h.app.services.idempotency;
  const body = { n: '1' };
  const send = (key: string) => request(probeUrl, 'POST', '/probe/slow', { body, headers: { ...auth(m), 'idempotency-key': key } });
  const row = (key: string) => h.app.services.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).first();
  /** The first attempt runs (held in its handler); its lease lapses and another attempt takes the key over. */
  const takeOver = async (key: string) => {
    slowGate = gate();
    const first = send(key);
    await until(`the claim of ${key}`, async () => (await row(key))?.state === 'in_progress');
    await h.app.services.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).update({ locked_until: new Date(clock.now().getTime() - 1) });
    const taker = await idem.claim(m.merchantId, key, 'POST', '/probe/slow', requestHash(h.app.services.secrets, 'POST', '/probe/slow', body));
    if (taker.kind !== 'run' || taker.fresh) throw new Error('expected a take-over');
    return { first, taker };
  };

  const done = await takeOver('taken-over-done');
  t.ok(await idem.complete(done.taker, 201, { answered_by: 'the taker' }), 'the taker stores its outcome');
  slowGate.resolve();
  const a = await done.first;
  t.equal(a.status, 201);
  t.equal(a.body.answered_by, 'the taker', 'the first attempt answers the stored outcome, not its own');
  t.equal(a.body._meta.idempotency_replayed, true);
  t.equal((await send('taken-over-done')).body.answered_by, 'the taker', 'as every retry does');

  const running = await takeOver('taken-over-running');
  slowGate.resolve();
  const b = await running.first;
  t.equal(b.status, 409, 'the taker still runs: in progress');
  t.equal(b.body.error.code, 'idempotency_in_progress');
  t.match(await row('taken-over-running'), { state: 'in_progress', response_body: null }, 'and the first attempt stored nothing');
});

t.test('a key stored with the unkeyed hash of before still replays its request, and refuses another body', async (t) => {
  const m = await h.newMerchant('UnkeyedHash');
  const idem = h.app.services.idempotency;
  const body = { amount: '7000' };
  const claim = await idem.claim(m.merchantId, 'unkeyed-1', 'POST', '/probe/refusals', unkeyedRequestHash('POST', '/probe/refusals', body));
  if (claim.kind !== 'run') throw new Error('expected a fresh claim');
  await idem.complete(claim, 400, { error: { code: 'insufficient_balance', message: 'The wallet holds too little', request_id: 'before' } });
  const before = refusals;
  const send = (b: unknown) => request(probeUrl, 'POST', '/probe/refusals', { body: b, headers: { ...auth(m), 'idempotency-key': 'unkeyed-1' } });
  const replay = await send(body);
  t.equal(replay.status, 400);
  t.match(replay.body, { error: { code: 'insufficient_balance', request_id: 'before' }, _meta: { idempotency_replayed: true } }, 'replayed');
  t.equal(refusals, before, 'the handler did not run again');
  t.equal((await send({ amount: '7001' })).body.error.code, 'idempotency_conflict', 'another body is still a conflict');
});
