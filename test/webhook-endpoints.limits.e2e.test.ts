// Issue 40 point 2a (CONTRACT.md §17): at most 16 webhook endpoints per merchant. The 17th create is
// 400 limit_exceeded through the merchant API (stored and replayed for its Idempotency-Key like any
// business refusal) and through the dashboard's form; deleting one makes room. Decided on the
// endpoints stream, so creates racing from two processes cannot both pass: here two command
// pipelines with caches and turn-taking of their own (as two API processes have) on one database.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { FormClient, signedInClient } from './helpers/dashboard.ts';
import { Aggregates } from '../commands/aggregates.ts';
import { createEndpoint } from '../commands/webhook-endpoints.ts';
import { DomainError } from '../domain/errors.ts';
import { MAX_ENDPOINTS } from '../domain/webhook-endpoints.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const url = (i: number | string) => `https://hooks.example.com/${i}`;

t.test('the merchant API: 16 endpoints, the 17th is 400 limit_exceeded (replayed as such); a deleted one makes room', async (t) => {
  const m = await h.newMerchant('Sixteen');
  for (let i = 0; i < MAX_ENDPOINTS; i++) t.equal((await h.as(m, 'POST', '/webhook-endpoints', { url: url(i) }, { idem: true })).status, 201);
  const key = randomUUID();
  const over = await h.as(m, 'POST', '/webhook-endpoints', { url: url(16) }, { idem: key });
  t.equal(over.status, 400);
  t.equal(over.body.error.code, 'limit_exceeded');
  t.match(over.body.error.message, /at most 16 webhook endpoints/);
  const replay = await h.as(m, 'POST', '/webhook-endpoints', { url: url(16) }, { idem: key });
  t.match({ status: replay.status, code: replay.body.error.code, replayed: replay.body._meta?.idempotency_replayed }, { status: 400, code: 'limit_exceeded', replayed: true },
    'a business refusal: stored and replayed for its key');
  const list = (await h.as(m, 'GET', '/webhook-endpoints')).body.data as Array<{ id: string }>;
  t.equal(list.length, MAX_ENDPOINTS, 'nothing was created');
  t.equal((await h.as(m, 'DELETE', `/webhook-endpoints/${list[3]!.id}`)).status, 204);
  t.equal((await h.as(m, 'POST', '/webhook-endpoints', { url: url(16) }, { idem: true })).status, 201, 'one deleted: room for one');
  t.equal((await h.as(m, 'POST', '/webhook-endpoints', { url: url(17) }, { idem: true })).body.error.code, 'limit_exceeded', 'and one only');
  const doc = (await h.as(m, 'GET', '/openapi.json')).body;
  const codes = JSON.stringify(doc).includes('limit_exceeded');
  t.ok(codes, 'the OpenAPI document knows the code');
});

t.test("a merchant whose URL was set before endpoints: its adopted URL is one of the 16", async (t) => {
  const m = await h.newMerchant('Legacy');
  t.equal((await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: url('legacy') })).status, 200);
  for (let i = 0; i < MAX_ENDPOINTS - 1; i++) t.equal((await h.as(m, 'POST', '/webhook-endpoints', { url: url(i) }, { idem: true })).status, 201);
  const list = (await h.as(m, 'GET', '/webhook-endpoints')).body.data as Array<{ id: string }>;
  t.equal(list[0]!.id, m.merchantId, 'the adopted URL is the first endpoint');
  t.equal((await h.as(m, 'POST', '/webhook-endpoints', { url: url('x') }, { idem: true })).body.error.code, 'limit_exceeded');
});

t.test('creates racing from two processes: exactly 16 pass', async (t) => {
  const m = await h.newMerchant('Racing');
  const s = h.app.services;
  // A second command pipeline on the same event store: its own cache and its own turn-taking, as
  // another API process has (in one pipeline, commands on one stream take turns and never race).
  const other = { ...s, aggregates: new Aggregates(s.store) };
  const tries = Array.from({ length: 2 * MAX_ENDPOINTS }, (_, i) => i);
  const outcomes = await Promise.allSettled(tries.map((i) =>
    createEndpoint(i % 2 === 0 ? s : other, m.merchantId, randomUUID(), { url: url(i), enabledEvents: ['*'], description: null }, { actor: 'test' })));
  const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as unknown);
  t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, MAX_ENDPOINTS, '16 created');
  t.ok(refused.every((e) => e instanceof DomainError && e.code === 'limit_exceeded'), `the other ${refused.length}: limit_exceeded`);
  t.equal((await h.as(m, 'GET', '/webhook-endpoints')).body.data.length, MAX_ENDPOINTS, 'and 16 there are');
});

t.test("the dashboard's add form: the 17th is refused on the page, 400, nothing added", async (t) => {
  const m = await h.newMerchant('Dashboard sixteen');
  for (let i = 0; i < MAX_ENDPOINTS; i++) await h.as(m, 'POST', '/webhook-endpoints', { url: url(i) }, { idem: true });
  const c = await signedInClient(h, m.merchantId, 'sixteen@example.com');
  const page = await c.get('/dashboard/webhooks');
  const added = await c.post('/dashboard/webhooks/endpoints', {
    csrf_token: FormClient.csrf(page), form_nonce: FormClient.nonce(page, '/dashboard/webhooks/endpoints')!, url: url('dash'), description: '', events: '*',
  });
  t.equal(added.status, 400);
  t.match(added.text, /at most 16 webhook endpoints/);
  t.notMatch(added.text, /whsec_/, 'no secret shown');
  t.equal((await h.as(m, 'GET', '/webhook-endpoints')).body.data.length, MAX_ENDPOINTS);
});
