// Webhook endpoints (CONTRACT.md §11, issue 34 point 1): the merchant API; two endpoints with
// different filters and secrets each getting exactly their events, each verifying with its own;
// attempts per endpoint on GET /events/{id}; redelivery to every matching endpoint; staged rotation
// with a receiver that adds the new secret within the window (no verification ever fails); 410
// disables; a disabled endpoint gets nothing; the operator's PUT sets the first endpoint; a slow
// endpoint never delays another. Runs on both backends (test/lanes.ts SERVICES).
//
// No assertion races a time-out: the attempt time-out is long (a safety net), a hanging endpoint
// hangs until the test cuts its connections, and the secret rotation runs on a manual clock.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, type MerchantCreds, type TestApp } from './helpers/app.ts';
import {
  startReceiver, until, widgetResource, completedWidget, configureWebhook, appendWidget, widgetCreated, widgetStep, widgetCompleted,
  deliveriesIdle, eventsOf, type Delivery,
} from './helpers/webhooks.ts';
import { ManualClock } from '../infra/clock.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { sendTestWebhook } from '../commands/webhook-tests.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';
import { PER_ENDPOINT_CONCURRENCY } from '../workers/webhooks/delivery.ts';

registerWebhookResource(widgetResource);
const env = { WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05,0.05', WEBHOOK_TIMEOUT_MS: '60000' };
const h = await startTestApp({ env });
t.teardown(() => h.stop());

async function addEndpoint(m: MerchantCreds, body: Record<string, unknown>, app: TestApp = h): Promise<{ id: string; secret: string }> {
  const r = await app.as(m, 'POST', '/webhook-endpoints', body, { idem: true });
  if (r.status !== 201) throw new Error(`endpoint create failed: ${r.status} ${r.text}`);
  return { id: r.body.id, secret: r.body.signing_secret };
}

const verifies = (d: Delivery, secret: string | string[]) => {
  try {
    verifyWebhook(d.body, d.headers, secret);
    return true;
  } catch {
    return false;
  }
};
const idOf = (d: Delivery) => JSON.parse(d.body).data.id as string;

t.test('the merchant API: create (secret once), list, read, update, delete; refusals; another merchant gets 404', async (t) => {
  const m = await h.newMerchant('Endpoints');
  const other = await h.newMerchant('Other');
  const key = randomUUID();
  const body = { url: 'https://hooks.example.com/a', enabled_events: ['payin.completed', 'refund.completed'], description: 'orders' };
  const created = await h.as(m, 'POST', '/webhook-endpoints', body, { idem: key });
  t.equal(created.status, 201);
  t.match(created.body, { url: body.url, enabled_events: body.enabled_events, description: 'orders', status: 'enabled' });
  t.match(created.body.signing_secret, /^whsec_/);
  const replay = await h.as(m, 'POST', '/webhook-endpoints', body, { idem: key });
  t.equal(replay.status, 201);
  t.equal(replay.body.id, created.body.id, 'a replay answers the same endpoint');
  t.equal(replay.body.signing_secret, created.body.signing_secret, 'a replay answers the same body, the secret included (a lost answer is not a lost secret)');
  const row = await h.app.services.knex('idempotency_keys').whereRaw('response_body::text like ?', [`%${replay.body.id}%`]).first();
  t.ok(row, 'the stored answer found');
  t.notOk(JSON.stringify(row).includes(created.body.signing_secret), 'the key stores the secret sealed, never in clear');
  t.equal(replay.body._meta.idempotency_replayed, true);
  const secret = created.body.signing_secret as string;
  const keys = JSON.stringify(await h.app.services.knex('idempotency_keys').where({ merchant_id: m.merchantId }).select('response_body'));
  t.notOk(keys.includes(secret), 'the secret is not in the idempotency store');
  const stream = await h.app.services.store.readStream(`webhook_endpoints-${m.merchantId}`);
  t.ok(stream.length > 0);
  t.notOk(JSON.stringify(stream.map((e) => e.data)).includes(secret), 'the secret is sealed in the events, never in clear');

  const dflt = await h.as(m, 'POST', '/webhook-endpoints', { url: 'https://hooks.example.com/b' }, { idem: true });
  t.same(dflt.body.enabled_events, ['*'], 'every event by default');

  const list = await h.as(m, 'GET', '/webhook-endpoints');
  t.equal(list.status, 200);
  t.same(list.body.data.map((e: any) => e.id), [created.body.id, dflt.body.id], 'oldest first');
  t.notOk(JSON.stringify(list.body).includes('whsec_'), 'no secret in the list');
  const one = await h.as(m, 'GET', `/webhook-endpoints/${created.body.id}`);
  t.same(Object.keys(one.body).sort(), ['created_at', 'description', 'enabled_events', 'id', 'status', 'updated_at', 'url']);

  const patched = await h.as(m, 'PATCH', `/webhook-endpoints/${created.body.id}`, { enabled_events: ['*'], status: 'disabled', description: null });
  t.equal(patched.status, 200);
  t.match(patched.body, { enabled_events: ['*'], status: 'disabled', description: null, url: body.url });

  const unknown = await h.as(m, 'POST', '/webhook-endpoints', { url: 'https://x.example.com', enabled_events: ['payin.exploded'] }, { idem: true });
  t.equal(unknown.status, 400);
  t.equal(unknown.body.error.code, 'bad_request');
  const badUrl = await h.as(m, 'POST', '/webhook-endpoints', { url: 'https://user:pw@x.example.com/h' }, { idem: true });
  t.equal(badUrl.status, 400, 'URL rules as the operator\'s');
  t.match(badUrl.body.error.details, [{ field: 'url' }]);
  const mixed = await h.as(m, 'PATCH', `/webhook-endpoints/${created.body.id}`, { enabled_events: ['*', 'payin.completed'] });
  t.equal(mixed.status, 400);

  for (const [method, path, b] of [['GET', '', undefined], ['PATCH', '', { status: 'enabled' }], ['DELETE', '', undefined], ['POST', '/rotate-secret', {}]] as const) {
    const r = await h.as(other, method, `/webhook-endpoints/${created.body.id}${path}`, b);
    t.equal(r.status, 404, `another merchant's endpoint: ${method} ${path} is a 404`);
  }
  t.equal((await h.as(m, 'DELETE', `/webhook-endpoints/${created.body.id}`)).status, 204);
  t.equal((await h.as(m, 'GET', `/webhook-endpoints/${created.body.id}`)).status, 404);
  t.same((await h.as(m, 'GET', '/webhook-endpoints')).body.data.map((e: any) => e.id), [dflt.body.id]);
});

t.test('two endpoints, different filters and secrets: each gets exactly its events, signed with its own secret', async (t) => {
  const rxA = await startReceiver();
  const rxB = await startReceiver();
  t.teardown(() => Promise.all([rxA.close(), rxB.close()]));
  const m = await h.newMerchant('Two endpoints');
  const a = await addEndpoint(m, { url: rxA.url, enabled_events: ['webhook.test'] });
  const b = await addEndpoint(m, { url: rxB.url });
  t.not(a.secret, b.secret);

  const testId = await sendTestWebhook(h.app.services, m.merchantId, { actor: 'test' });
  const widgets = [await completedWidget(h, m), await completedWidget(h, m)];
  await until(() => rxB.deliveries.length >= 3 && rxA.deliveries.length >= 1, 'the deliveries');
  await deliveriesIdle(h); // nothing more to arrive: no attempt due or under way
  t.same(rxA.deliveries.map(idOf), [testId], 'A (webhook.test only) gets the test event alone');
  t.same(new Set(rxB.deliveries.map(idOf)), new Set([testId, ...widgets]), 'B (every event) gets all three');
  t.equal(rxB.deliveries.length, 3);
  for (const d of rxA.deliveries) t.ok(verifies(d, a.secret) && !verifies(d, b.secret), "A's deliveries verify with A's secret only");
  for (const d of rxB.deliveries) t.ok(verifies(d, b.secret) && !verifies(d, a.secret), "B's deliveries verify with B's secret only");
  const atB = rxB.deliveries.find((d) => idOf(d) === testId)!;
  t.equal(atB.headers['x-service-webhook-id'], rxA.deliveries[0]!.headers['x-service-webhook-id'], 'the same X-Service-Webhook-Id for both');
  t.equal(atB.body, rxA.deliveries[0]!.body, 'the same body for both');

  const eventId = String(atB.headers['x-service-webhook-id']);
  const ev = await until(async () => {
    const r = await h.as(m, 'GET', `/events/${eventId}`);
    return r.body.delivery_status === 'delivered' ? r.body : undefined;
  }, 'the event delivered to both');
  t.same(new Set(ev.attempts.map((x: any) => x.endpoint_id)), new Set([a.id, b.id]), 'GET /events/{id}: one attempt per endpoint');
  t.equal(ev.attempt_count, 2);
  t.match(ev.attempts, [{ attempt: 1, succeeded: true }, { attempt: 1, succeeded: true }]);

  // Redelivery: to every enabled endpoint whose filter takes the event.
  t.equal((await h.as(m, 'POST', `/events/${eventId}/redeliver`)).status, 202);
  await until(() => rxA.deliveries.length === 2 && rxB.deliveries.length === 4, 'the redeliveries');
  const widgetEvent = rxB.deliveries.find((d) => idOf(d) === widgets[0])!.headers['x-service-webhook-id'];
  await h.as(m, 'PATCH', `/webhook-endpoints/${b.id}`, { status: 'disabled' });
  const none = await h.as(m, 'POST', `/events/${widgetEvent}/redeliver`);
  t.equal(none.status, 400, 'no enabled endpoint takes a widget event any more');
});

t.test('staged rotation: a receiver that adds the new secret within the window never fails a verification', async (t) => {
  // The window is the app's clock time: a manual clock's, so "within the window" never depends on
  // how fast the deliveries are, and reaching its end is moving the clock.
  const clock = new ManualClock();
  const app = await startTestApp({ env, clock });
  t.teardown(() => app.stop());
  const secrets: string[] = [];
  const failures: Delivery[] = [];
  const rx = await startReceiver((d) => {
    if (verifies(d, secrets)) return { status: 200 };
    failures.push(d);
    return { status: 400 };
  });
  t.teardown(() => rx.close());
  const m = await app.newMerchant('Rotates');
  const ep = await addEndpoint(m, { url: rx.url }, app);
  secrets.push(ep.secret);
  await completedWidget(app, m);
  await until(() => rx.deliveries.length === 1, 'a delivery before the rotation');

  const rotated = await app.as(m, 'POST', `/webhook-endpoints/${ep.id}/rotate-secret`, { activate_after_seconds: 2 });
  t.equal(rotated.status, 200);
  t.match(rotated.body.signing_secret, /^whsec_/);
  const activatesAt = Date.parse(rotated.body.activates_at);
  t.equal(activatesAt - clock.now().getTime(), 2000, 'activates in two seconds');
  // Within the window: still the current secret (a receiver that has not added the new one yet accepts it).
  await completedWidget(app, m);
  await until(() => rx.deliveries.length === 2, 'a delivery within the window');
  t.ok(verifies(rx.deliveries[1]!, ep.secret), 'signed with the current secret within the window');
  secrets.push(rotated.body.signing_secret); // the receiver adds the new secret, within the window
  clock.advance(1999);
  await completedWidget(app, m);
  await until(() => rx.deliveries.length === 3, 'another delivery within the window');
  t.ok(verifies(rx.deliveries[2]!, ep.secret), 'the current secret up to the last millisecond of the window');
  clock.advance(1);
  await completedWidget(app, m);
  await until(() => rx.deliveries.length === 4, 'a delivery after activation');
  const after = rx.deliveries[3]!;
  t.ok(verifies(after, rotated.body.signing_secret) && !verifies(after, ep.secret), 'from activates_at: the new secret alone');
  t.same(failures, [], 'no verification ever failed');

  // activate_after_seconds 0: at once.
  const now = await app.as(m, 'POST', `/webhook-endpoints/${ep.id}/rotate-secret`, { activate_after_seconds: 0 });
  t.equal(Date.parse(now.body.activates_at), clock.now().getTime());
  await completedWidget(app, m);
  await until(() => rx.deliveries.length === 5, 'a delivery after an immediate rotation');
  t.ok(verifies(rx.deliveries[4]!, now.body.signing_secret), 'signed with the newest secret at once');
  const plain = await app.as(m, 'POST', `/webhook-endpoints/${ep.id}/rotate-secret`);
  t.equal(Date.parse(plain.body.activates_at) - clock.now().getTime(), 86_400_000, 'the default window is a day');
});

t.test('a 410 disables the endpoint at once; a disabled endpoint gets nothing until enabled again', async (t) => {
  let gone = true;
  const rx = await startReceiver(() => ({ status: gone ? 410 : 200 }));
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Gone');
  const ep = await addEndpoint(m, { url: rx.url });
  const first = await completedWidget(h, m);
  await until(async () => (await h.as(m, 'GET', `/webhook-endpoints/${ep.id}`)).body.status === 'disabled', 'disabled after the 410');
  t.equal(rx.deliveries.length, 1, 'one attempt, then disabled');
  const ev = await until(async () => {
    const list = await h.as(m, 'GET', `/events?resource_id=${first}`);
    return list.body.data[0]?.delivery_status === 'failed' ? list.body.data[0] : undefined;
  }, 'the event failed: its endpoint is disabled');
  t.equal(ev.attempt_count, 1);

  gone = false;
  const whileDisabled = await completedWidget(h, m);
  const [notSent] = await until(async () => {
    const l = await eventsOf(h, m, whileDisabled);
    return l.length === 1 ? l : undefined;
  }, 'the event from while it is disabled recorded');
  await deliveriesIdle(h);
  t.equal(rx.deliveries.length, 1, 'nothing sent while disabled');
  t.equal(notSent.delivery_status, 'not_configured', 'an event while disabled is recorded, sent to no endpoint');
  t.equal((await h.as(m, 'PATCH', `/webhook-endpoints/${ep.id}`, { status: 'enabled' })).body.status, 'enabled');
  const later = await completedWidget(h, m);
  await until(() => rx.deliveries.some((d) => idOf(d) === later), 'delivered once enabled again');
  t.notOk(rx.deliveries.some((d) => idOf(d) === whileDisabled), 'the event from while it was disabled was not sent');
});

t.test("the operator's PUT: the URL from before endpoints is the first endpoint; later PUTs set the first endpoint", async (t) => {
  const rx1 = await startReceiver();
  const rx2 = await startReceiver();
  const rx3 = await startReceiver();
  t.teardown(() => Promise.all([rx1.close(), rx2.close(), rx3.close()]));
  const m = await h.newMerchant('Operator URL');
  const legacySecret = await configureWebhook(h, m, rx1.url);
  const listed = (await h.as(m, 'GET', '/webhook-endpoints')).body.data;
  t.match(listed, [{ id: m.merchantId, url: rx1.url, enabled_events: ['*'], status: 'enabled' }], 'one endpoint: the URL the operator set');
  const w1 = await completedWidget(h, m);
  await until(() => rx1.deliveries.length === 1, 'delivered to the operator URL');
  t.ok(verifies(rx1.deliveries[0]!, legacySecret));
  t.equal(idOf(rx1.deliveries[0]!), w1);

  // The merchant adds a second endpoint: the first is adopted, and keeps receiving.
  const second = await addEndpoint(m, { url: rx2.url, enabled_events: ['webhook.test'] });
  t.same((await h.as(m, 'GET', '/webhook-endpoints')).body.data.map((e: any) => e.id), [m.merchantId, second.id]);
  const w2 = await completedWidget(h, m);
  await until(() => rx1.deliveries.length === 2, 'the first endpoint still receives');
  t.ok(verifies(rx1.deliveries[1]!, legacySecret), 'with its secret');
  t.equal(idOf(rx1.deliveries[1]!), w2);

  const put = await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: rx3.url });
  t.equal(put.status, 200);
  const after = (await h.as(m, 'GET', '/webhook-endpoints')).body.data;
  t.match(after, [{ id: m.merchantId, url: rx3.url }, { id: second.id, url: rx2.url }], 'the PUT set the first endpoint\'s URL');
  await completedWidget(h, m);
  await until(() => rx3.deliveries.length === 1, 'delivered to the new URL');
  t.ok(verifies(rx3.deliveries[0]!, put.body.signing_secret) && !verifies(rx3.deliveries[0]!, legacySecret), 'with the new secret, at once');
  t.equal(rx2.deliveries.length, 0, 'the webhook.test endpoint got no widget event');

  // Changing the URL from before endpoints through the merchant API adopts it under the same id.
  const legacy = await h.newMerchant('Legacy filter');
  const legacyKey = await configureWebhook(h, legacy, rx2.url);
  const patched = await h.as(legacy, 'PATCH', `/webhook-endpoints/${legacy.merchantId}`, { enabled_events: ['webhook.test'] });
  t.equal(patched.status, 200);
  t.match(patched.body, { id: legacy.merchantId, url: rx2.url, enabled_events: ['webhook.test'] });
  await completedWidget(h, legacy);
  const testId = await sendTestWebhook(h.app.services, legacy.merchantId, { actor: 'test' });
  await until(() => rx2.deliveries.some((d) => idOf(d) === testId), 'the test event at the adopted endpoint');
  t.equal(rx2.deliveries.length, 1, 'its new filter holds: no widget event');
  t.ok(verifies(rx2.deliveries[0]!, legacyKey), 'still signed with the secret the operator was given');

  const fresh = await h.newMerchant('No endpoint yet');
  await addEndpoint(fresh, { url: rx2.url, enabled_events: ['payin.completed'] });
  const put2 = await h.admin('PUT', `/admin/merchants/${fresh.merchantId}/webhook`, { url: rx3.url });
  t.equal(put2.status, 200);
  t.match((await h.as(fresh, 'GET', '/webhook-endpoints')).body.data, [{ url: rx3.url, enabled_events: ['payin.completed'] }],
    'a merchant with endpoints: the PUT sets the first one\'s URL, keeping its filter');
});

t.test("a hanging endpoint never delays its merchant's other endpoint nor another merchant", async (t) => {
  const dead = await startReceiver(() => ({ hang: true }));
  const alive = await startReceiver();
  const elsewhere = await startReceiver();
  t.teardown(() => Promise.all([dead.close(), alive.close(), elsewhere.close()]));
  const m = await h.newMerchant('Slow and fast');
  const other = await h.newMerchant('Another');
  await addEndpoint(m, { url: dead.url });
  await addEndpoint(other, { url: elsewhere.url });
  const hanging: string[] = [];
  for (let i = 0; i < 10; i++) hanging.push(await completedWidget(h, m));
  await until(() => dead.deliveries.length >= PER_ENDPOINT_CONCURRENCY, 'the hanging endpoint busy');
  // Every one of them recorded before the second endpoint comes: an event is recorded for the
  // endpoints there are when it is recorded (workers/webhooks/targets.ts), and the recorder may run
  // behind the appends (seen in the services lane: one of the ten went to the new endpoint).
  await until(async () => (await Promise.all(hanging.map((id) => eventsOf(h, m, id)))).every((es) => es.some((e) => e.event === 'widget.completed')),
    'the ten events of the hanging endpoint recorded');
  await addEndpoint(m, { url: alive.url });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await completedWidget(h, m));
  const otherIds: string[] = [];
  for (let i = 0; i < 5; i++) otherIds.push(await completedWidget(h, other));
  await until(() => alive.deliveries.length >= 5 && elsewhere.deliveries.length === 5, 'the fast endpoints');
  // The hanging attempts hang until the test cuts them (the time-out is a minute): none has ended.
  const ended = (await Promise.all(hanging.map((id) => eventsOf(h, m, id)))).flat().flatMap((e) => e.attempts);
  t.same(ended, [], 'the fast endpoints got theirs while every attempt at the hanging endpoint was still under way');
  t.same(new Set(alive.deliveries.map(idOf)), new Set(ids), "the merchant's fast endpoint got exactly the events since it was added");
  t.same(new Set(elsewhere.deliveries.map(idOf)), new Set(otherIds));
  t.equal(dead.deliveries.length, PER_ENDPOINT_CONCURRENCY, `at most ${PER_ENDPOINT_CONCURRENCY} attempts in flight at the hanging endpoint`);
});

t.test("a resource's events keep their order per endpoint; one endpoint's wait never holds another's", async (t) => {
  let first = true;
  const slow = await startReceiver(() => {
    if (!first) return { status: 200 };
    first = false;
    return { hang: true }; // its first attempt hangs until cut, then is retried
  });
  const fast = await startReceiver();
  t.teardown(() => Promise.all([slow.close(), fast.close()]));
  const m = await h.newMerchant('Order per endpoint');
  await addEndpoint(m, { url: slow.url });
  await addEndpoint(m, { url: fast.url });
  const id = randomUUID();
  await appendWidget(h, id, [widgetCreated(m), widgetStep('a'), widgetCompleted()]);
  await until(() => fast.deliveries.length === 2, 'both events at the fast endpoint');
  t.same(fast.deliveries.map((d) => d.headers['x-service-event']), ['widget.step.completed', 'widget.completed'], 'in order at the fast endpoint');
  t.equal(slow.deliveries.length, 1, 'the slow endpoint still has only the first, hanging');
  slow.cut(); // the hanging attempt fails; its retry succeeds
  await until(() => slow.deliveries.length === 3, 'the slow endpoint: the retry, then the next event');
  t.same(slow.deliveries.map((d) => d.headers['x-service-event']), ['widget.step.completed', 'widget.step.completed', 'widget.completed'],
    'the next event only once its predecessor is acknowledged there');
});
