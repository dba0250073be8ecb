// Payment links' answers against the OpenAPI document (issue 42: "OpenAPI matching answers"): every
// answer recorded (create, replay, read, list with filters, deactivate, the link's payments and
// events, the payin with payment_link_id, and the refusals) validated against the schema its
// operation and status declare.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, request } from './helpers/app.ts';
import { settled } from './helpers/money.ts';
import { recording, responseChecker, type Recorded } from './helpers/openapi-responses.ts';
import { payThroughLink } from '../commands/payment-links.ts';

const app = await startTestApp();
t.teardown(() => app.stop());
const seen: Recorded[] = [];
const h = recording(app, seen);

t.test('the links\' answers, good and refused', async (t) => {
  const m = await h.newMerchant();
  const key = randomUUID();
  const body = { amount: '5000', currency: 'XAF', description: 'Robe wax', max_payments: 2, expires_at: new Date(Date.now() + 86_400_000).toISOString(), metadata: { order: '42' } };
  const made = await h.as(m, 'POST', '/payment-links', body, { idem: key });
  t.equal(made.status, 201);
  t.equal((await h.as(m, 'POST', '/payment-links', body, { idem: key })).status, 201, 'replayed');
  const id = made.body.id as string;
  const p = await payThroughLink(app.app.services, {
    linkId: id, attemptId: randomUUID(), countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '670000001', name: 'Awa Diop', otp: undefined,
  }, { requestId: 'test', actor: 'test' });
  await settled(app, m, 'payins', p.payinId);
  await h.as(m, 'GET', `/payins/${p.payinId}`);
  await h.as(m, 'GET', `/payins?payment_link_id=${id}`);
  await h.as(m, 'GET', `/payment-links/${id}`);
  await h.as(m, 'GET', `/payment-links/${id}/payments`);
  await h.as(m, 'GET', `/payment-links/${id}/events`);
  for (const status of ['active', 'inactive', 'completed', 'expired']) await h.as(m, 'GET', `/payment-links?status=${status}`);
  await h.as(m, 'POST', `/payment-links/${id}/deactivate`);
  await h.as(m, 'POST', `/payment-links/${id}/deactivate`);
  t.equal((await h.as(m, 'POST', '/payment-links', { ...body, expires_at: '2000-01-01T00:00:00Z' }, { idem: true })).status, 400);
  t.equal((await h.as(m, 'POST', '/payment-links', { ...body, customer_id: randomUUID() }, { idem: true })).status, 400);
  t.equal((await h.as(m, 'GET', `/payment-links/${randomUUID()}`)).status, 404);
  t.equal((await h.as(m, 'POST', `/payment-links/${randomUUID()}/deactivate`)).status, 404);
  t.equal((await h.as(m, 'GET', `/payment-links/${randomUUID()}/payments`)).status, 404);
});

t.test('every answer above matches the OpenAPI document', async (t) => {
  const check = responseChecker((await request(app.url, 'GET', '/openapi.json')).body);
  const covered = new Set<string>();
  for (const rec of seen) {
    const { operationId, problems } = check(rec);
    t.same(problems, [], `${rec.method} ${rec.path} → ${rec.status}`);
    if (operationId) covered.add(operationId);
  }
  for (const op of ['createPaymentLink', 'getPaymentLink', 'listPaymentLinks', 'deactivatePaymentLink', 'getPaymentLinkEvents', 'getPayin']) t.ok(covered.has(op), `${op} checked`);
});
