// Webhooks (issue 5): one event per terminal state change, recorded before delivery; signed
// deliveries verified by the merchant-side verifier; the retry schedule to `failed`; redelivery;
// order per resource; no redirects; the merchant's event API. Uses a test-only resource (widgets)
// appended straight to the event store, and local receivers on 127.0.0.1.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { startTestApp } from './helpers/app.ts';
import {
  startReceiver, until, sleep, widgetResource, appendWidget, widgetCreated, widgetCompleted, widgetFailed, widgetStep,
  widgetAmended, completedWidget, configureWebhook, eventsOf, deliveriesIdle, noDeliveryJobsFor, type Delivery,
} from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { recordWebhookEvent } from '../workers/webhooks/store.ts';
import { toMessage } from '../workers/event-forwarder.ts';
import { verifyWebhook, WebhookVerificationError } from '../webhook-verifier/index.ts';

registerWebhookResource(widgetResource);
const h = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05,0.05', WEBHOOK_TIMEOUT_MS: '2000' } });
t.teardown(() => h.stop());

const bodyOf = (d: Delivery) => JSON.parse(d.body);

t.test('a terminal event is recorded once and delivered signed, with the snapshot at event time', async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Signed');
  const secret = await configureWebhook(h, m, rx.url);
  const customerId = randomUUID();
  const id = randomUUID();
  // The amendment after completion is in the same append: whenever the webhook is recorded, the
  // stream already holds it, and the snapshot must still show the widget as it was at completion.
  await appendWidget(h, id, [
    widgetCreated(m, { amount: '1000', otp: '864209', customer_id: customerId, metadata: { order: 'A-1' } }),
    widgetCompleted(),
    widgetAmended('2000'),
  ]);
  const d = await until(() => rx.deliveries[0], 'the delivery');
  const event = verifyWebhook(d.body, d.headers, secret);
  const domainEvents = await h.app.services.store.readStream(`widget-${id}`);
  const completed = domainEvents.find((e) => e.type === 'widget.completed')!;

  t.equal(d.method, 'POST');
  t.equal(d.path, '/hooks');
  t.equal(d.headers['content-type'], 'application/json');
  t.equal(d.headers['x-service-event'], 'widget.completed');
  t.equal(d.headers['x-service-webhook-id'], completed.id, 'X-Service-Webhook-Id is the event id');
  t.match(d.headers['x-service-signature'], /^sha256=[0-9a-f]{64}$/);
  t.ok(Math.abs(Number(d.headers['x-service-timestamp']) - Date.now() / 1000) < 30, 'X-Service-Timestamp is Unix seconds');
  t.same(Object.keys(event), ['id', 'event', 'created_at', 'data'], 'the envelope');
  t.equal(event.id, completed.id, 'the envelope id is the domain event id');
  t.equal(event.event, 'widget.completed');
  t.equal(event.created_at, completed.createdAt.toISOString());
  t.same(Object.keys(event.data), ['type', 'id', 'object']);
  t.equal(event.data.type, 'widget');
  t.equal(event.data.id, id);
  t.match(event.data.object, { merchant_id: m.merchantId, customer_id: customerId, status: 'completed', amount: '1000', metadata: { order: 'A-1' } });
  t.notOk('otp' in event.data.object, 'no OTP in the snapshot');
  t.notOk(d.body.includes('864209'), 'the OTP value is nowhere in the body');
  t.notOk(d.body.includes(secret), 'the signing secret is nowhere in the body');

  const got = await until(async () => {
    const r = await h.as(m, 'GET', `/events/${completed.id}`);
    return r.body.delivery_status === 'delivered' ? r : undefined;
  }, 'delivered');
  t.equal(got.status, 200);
  t.equal(got.body.attempt_count, 1);
  t.equal(got.body.attempts.length, 1);
  t.match(got.body.attempts[0], { attempt: 1, trigger: 'scheduled', status_code: 200, error: null, succeeded: true, url: rx.url });
  t.type(got.body.attempts[0].duration_ms, 'number');
  t.ok(got.body.delivered_at);
  t.same({ id: got.body.id, event: got.body.event, created_at: got.body.created_at, data: got.body.data }, JSON.parse(d.body), 'GET shows the envelope sent');

  // Exactly once: a re-sent bus message records nothing more and sends nothing more.
  t.equal(await recordWebhookEvent(h.app.services, toMessage(completed)), 0, 'a redelivered message inserts nothing');
  t.equal(await recordWebhookEvent(h.app.services, toMessage(completed), { firstDelivery: true }), 0,
    'a re-sent message seen as a first delivery (no lookup first) inserts nothing either');
  await noDeliveryJobsFor(h, completed.id);
  await deliveriesIdle(h);
  t.equal(rx.deliveries.length, 1, 'one delivery');
  const rows = await h.app.services.knex('webhook_events').where({ resource_id: id });
  t.equal(rows.length, 1, 'one webhook event for one terminal state change (step and amendment are not webhook events here)');
});

t.test('without a webhook URL the event is recorded as not_configured; redelivery sends it once a URL is set', async (t) => {
  const m = await h.newMerchant('No URL');
  const id = await completedWidget(h, m);
  const [ev] = await until(async () => {
    const list = await eventsOf(h, m, id);
    return list.length === 1 ? list : undefined;
  }, 'the recorded event');
  t.equal(ev.delivery_status, 'not_configured');
  t.same(ev.attempts, []);
  t.equal(ev.next_attempt_at, null);
  const refused = await h.as(m, 'POST', `/events/${ev.id}/redeliver`);
  t.equal(refused.status, 400, 'nothing to redeliver to');

  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const secret = await configureWebhook(h, m, rx.url);
  // The merchant's "no URL" was cached when the first event was recorded (bench issue 8): setting
  // the URL clears it, so the next event is recorded pending and sent on its own. It comes after the
  // configuration in the event order: once it is delivered, the configuration has been seen.
  const next = await completedWidget(h, m);
  const [fresh] = await until(async () => {
    const list = await eventsOf(h, m, next);
    return list.length === 1 && list[0].delivery_status === 'delivered' ? list : undefined;
  }, 'the next event, delivered without a redelivery');
  t.equal(fresh.attempts[0].trigger, 'scheduled');
  await deliveriesIdle(h);
  t.same(rx.deliveries.map((d) => d.headers['x-service-webhook-id']), [fresh.id], 'configuring a URL does not send old events by itself');
  const redeliver = await h.as(m, 'POST', `/events/${ev.id}/redeliver`);
  t.equal(redeliver.status, 202);
  t.equal(redeliver.body.id, ev.id);
  const d = await until(() => rx.deliveries[1], 'the redelivery');
  t.equal(verifyWebhook(d.body, d.headers, secret).id, ev.id);
  const after = await until(async () => {
    const r = await h.as(m, 'GET', `/events/${ev.id}`);
    return r.body.delivery_status === 'delivered' ? r.body : undefined;
  }, 'delivered');
  t.match(after.attempts, [{ attempt: 1, trigger: 'manual', status_code: 200, succeeded: true }]);
});

t.test('the whole schedule: 7 attempts with the same bytes, each signed afresh, then failed; redelivery after failed', async (t) => {
  let ok = false;
  const rx = await startReceiver(() => ({ status: ok ? 200 : 503 }));
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Retries');
  const secret = await configureWebhook(h, m, rx.url);
  const id = await completedWidget(h, m);
  const failed = await until(async () => {
    const [ev] = await eventsOf(h, m, id);
    return ev?.delivery_status === 'failed' ? ev : undefined;
  }, 'failed after the schedule');
  t.equal(failed.attempt_count, 7, '7 attempts in all');
  t.equal(failed.attempts.length, 7, 'every attempt recorded');
  t.same(failed.attempts.map((a: any) => a.attempt), [1, 2, 3, 4, 5, 6, 7]);
  for (const a of failed.attempts) {
    t.match(a, { trigger: 'scheduled', status_code: 503, succeeded: false, url: rx.url });
    t.type(a.duration_ms, 'number');
  }
  const times = failed.attempts.map((a: any) => Date.parse(a.attempted_at));
  for (let i = 1; i < times.length; i++) t.ok(times[i] - times[i - 1] >= 50, `retry ${i} waited its 0.05 s`);
  t.equal(failed.next_attempt_at, null);
  await noDeliveryJobsFor(h, failed.id);
  t.equal(rx.deliveries.length, 7, 'nothing after the seventh attempt');
  t.equal(new Set(rx.deliveries.map((d) => d.body)).size, 1, 'the exact same body bytes on every attempt');
  t.equal(new Set(rx.deliveries.map((d) => d.headers['x-service-webhook-id'])).size, 1, 'the same webhook id on every attempt');
  for (const d of rx.deliveries) t.equal(verifyWebhook(d.body, d.headers, secret).id, failed.id, `attempt ${d.n} verifies with its own timestamp`);

  ok = true;
  const r = await h.as(m, 'POST', `/events/${failed.id}/redeliver`);
  t.equal(r.status, 202);
  t.equal(r.body.delivery_status, 'failed', 'answered with the event as it stands');
  const delivered = await until(async () => {
    const g = await h.as(m, 'GET', `/events/${failed.id}`);
    return g.body.delivery_status === 'delivered' ? g.body : undefined;
  }, 'delivered by the redelivery');
  t.equal(delivered.attempts.length, 8);
  t.match(delivered.attempts[7], { attempt: 8, trigger: 'manual', status_code: 200, succeeded: true });
  t.equal(rx.deliveries.length, 8);
  t.equal(rx.deliveries[7]!.body, rx.deliveries[0]!.body, 'a redelivery sends the same bytes');

  const again = await h.as(m, 'POST', `/events/${failed.id}/redeliver`);
  t.equal(again.status, 202, 'a delivered event can be redelivered too');
  await until(() => rx.deliveries.length === 9, 'the second redelivery');
  const final = await h.as(m, 'GET', `/events/${failed.id}`);
  t.equal(final.body.delivery_status, 'delivered');
});

t.test('a redirect is not followed: the attempt is recorded as failed with its 302', async (t) => {
  const elsewhere = await startReceiver();
  t.teardown(() => elsewhere.close());
  const rx = await startReceiver(() => ({ status: 302, headers: { location: elsewhere.url } }));
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Redirect');
  await configureWebhook(h, m, rx.url);
  const id = await completedWidget(h, m);
  const ev = await until(async () => {
    const [e] = await eventsOf(h, m, id);
    return e?.delivery_status === 'failed' ? e : undefined;
  }, 'failed');
  t.equal(ev.attempts.length, 7);
  for (const a of ev.attempts) t.match(a, { status_code: 302, succeeded: false, error: 'redirect not followed' });
  t.equal(elsewhere.connections, 0, 'the redirect target was never contacted');
});

t.test("one resource's events reach the receiver in order, each only after the previous one is acknowledged", async (t) => {
  const rx = await startReceiver((d) => {
    const name = d.headers['x-service-event'];
    const tries = rx.deliveries.filter((x) => x.headers['x-service-event'] === name).length;
    return { status: name === 'widget.step.completed' && bodyOf(d).data.object.steps.length === 1 && tries <= 2 ? 500 : 200 };
  });
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Order');
  const secret = await configureWebhook(h, m, rx.url);
  const id = randomUUID();
  await appendWidget(h, id, [widgetCreated(m), widgetStep('collect'), widgetStep('disburse'), widgetCompleted()]);
  const list = await until(async () => {
    const l = await eventsOf(h, m, id);
    return l.length === 3 && l.every((e) => e.delivery_status === 'delivered') ? l : undefined;
  }, 'the three events delivered');
  for (const e of list) await noDeliveryJobsFor(h, e.id);
  const seen = rx.deliveries.map((d) => {
    const e = verifyWebhook(d.body, d.headers, secret);
    return `${e.event}:${(e.data.object as any).steps.join('+')}`;
  });
  t.same(seen, [
    'widget.step.completed:collect', 'widget.step.completed:collect', 'widget.step.completed:collect',
    'widget.step.completed:collect+disburse',
    'widget.completed:collect+disburse',
  ], 'the second event waits for the first to be acknowledged, the third for the second');
  t.same(list.map((e) => e.delivery_status), ['delivered', 'delivered', 'delivered']);
  // One append: the three events share their created_at, so the list order among them is not asserted.
  const counts = Object.fromEntries(list.map((e) => [`${e.event}:${e.data.object.steps.join('+')}`, e.attempt_count]));
  t.same(counts, { 'widget.step.completed:collect': 3, 'widget.step.completed:collect+disburse': 1, 'widget.completed:collect+disburse': 1 });
});

t.test('a finally failed event releases the next one of its resource', async (t) => {
  const rx = await startReceiver((d) => ({ status: d.headers['x-service-event'] === 'widget.step.completed' ? 500 : 200 }));
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Order after failure');
  await configureWebhook(h, m, rx.url);
  const id = randomUUID();
  await appendWidget(h, id, [widgetCreated(m), widgetStep('collect'), widgetFailed()]);
  await until(() => rx.deliveries.length === 8, '7 failed attempts, then the next event');
  t.same(rx.deliveries.map((d) => d.headers['x-service-event']), [...Array(7).fill('widget.step.completed'), 'widget.failed']);
  const states = await until(async () => {
    const l = await eventsOf(h, m, id);
    const byName = Object.fromEntries(l.map((e) => [e.event, e.delivery_status]));
    return byName['widget.failed'] === 'delivered' ? byName : undefined;
  }, 'delivered');
  t.same(states, { 'widget.failed': 'delivered', 'widget.step.completed': 'failed' });
});

t.test('GET /events: newest first, filters, pagination; another merchant gets 404', async (t) => {
  const m = await h.newMerchant('Lists');
  const other = await h.newMerchant('Other');
  const customerId = randomUUID();
  const a = await completedWidget(h, m, { customer_id: customerId });
  await sleep(5);
  const b = randomUUID();
  await appendWidget(h, b, [widgetCreated(m), widgetFailed()]);
  await sleep(5);
  const c = await completedWidget(h, m);
  const all = await until(async () => {
    const r = await h.as(m, 'GET', '/events');
    return r.body.data?.length === 3 ? r.body : undefined;
  }, 'three events');
  t.same(all.data.map((e: any) => e.data.id), [c, b, a], 'newest first');
  t.equal(all.has_more, false);
  t.equal(all.next_cursor, null);
  t.ok(all.data.every((e: any) => e.delivery_status === 'not_configured' && Array.isArray(e.attempts)));

  const p1 = await h.as(m, 'GET', '/events?limit=2');
  t.equal(p1.body.data.length, 2);
  t.equal(p1.body.has_more, true);
  const p2 = await h.as(m, 'GET', `/events?limit=2&cursor=${p1.body.next_cursor}`);
  t.same(p2.body.data.map((e: any) => e.data.id), [a]);
  t.equal(p2.body.has_more, false);

  const only = async (q: string) => (await h.as(m, 'GET', `/events?${q}`)).body.data.map((e: any) => e.data.id);
  t.same(await only('event=widget.failed'), [b]);
  t.same(await only('type=widget'), [c, b, a]);
  t.same(await only('type=payin'), []);
  t.same(await only(`resource_id=${a}`), [a]);
  t.same(await only(`customer_id=${customerId}`), [a]);
  t.same(await only('delivery_status=not_configured'), [c, b, a]);
  t.same(await only('status=delivered'), []);
  t.same(await only(`created_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
  t.same(await only(`created_to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), [c, b, a]);
  t.equal((await h.as(m, 'GET', '/events?delivery_status=lost')).status, 400);
  t.equal((await h.as(m, 'GET', '/events?cursor=nonsense')).status, 400);
  t.equal((await h.as(m, 'GET', '/events?limit=101')).status, 400);

  t.same((await h.as(other, 'GET', '/events')).body.data, [], "another merchant's list is its own");
  const eventId = all.data[0].id;
  t.equal((await h.as(other, 'GET', `/events/${eventId}`)).status, 404);
  t.equal((await h.as(other, 'POST', `/events/${eventId}/redeliver`)).status, 404);
  t.equal((await h.as(m, 'GET', `/events/${randomUUID()}`)).status, 404);
  t.equal((await h.as(m, 'GET', '/events/not-a-uuid')).status, 404);
  t.equal((await h.as(m, 'GET', `/events/${eventId}`)).status, 200);
});

t.test('rotating the signing secret: later attempts are signed with the new one only', async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Rotate');
  const oldSecret = await configureWebhook(h, m, rx.url);
  const rotated = await h.admin('POST', `/admin/merchants/${m.merchantId}/webhook/rotate-secret`);
  t.equal(rotated.status, 200);
  t.equal(rotated.body.url, rx.url, 'the URL stays');
  t.match(rotated.body.signing_secret, /^whsec_/);
  t.not(rotated.body.signing_secret, oldSecret);
  await completedWidget(h, m);
  const d = await until(() => rx.deliveries[0], 'the delivery');
  t.ok(verifyWebhook(d.body, d.headers, rotated.body.signing_secret), 'verifies with the new secret');
  t.throws(() => verifyWebhook(d.body, d.headers, oldSecret), WebhookVerificationError, 'not with the old one');
  t.ok(verifyWebhook(d.body, d.headers, [oldSecret, rotated.body.signing_secret]), 'a receiver may accept both while it switches');

  const bare = await h.newMerchant('No URL to rotate');
  t.equal((await h.admin('POST', `/admin/merchants/${bare.merchantId}/webhook/rotate-secret`)).status, 400);
  t.equal((await h.admin('POST', `/admin/merchants/${randomUUID()}/webhook/rotate-secret`)).status, 404);
  t.equal((await h.as(m, 'POST', `/admin/merchants/${m.merchantId}/webhook/rotate-secret`)).status, 401, 'operators only');
});

t.test('the documented Express receiver: verify over the raw body, dedupe by event id', async (t) => {
  const processed = new Map<string, string>(); // event id → status applied (the receiver's own store)
  const secretOf = { current: '' };
  let handled = 0;
  const app = express();
  app.post('/webhooks/payments', express.raw({ type: 'application/json', limit: '1mb' }), (req, res) => {
    let event;
    try {
      event = verifyWebhook(req.body as Buffer, req.headers, secretOf.current);
    } catch (err) {
      if (err instanceof WebhookVerificationError) {
        res.status(400).json({ error: err.code });
        return;
      }
      throw err;
    }
    if (processed.has(event.id)) {
      res.sendStatus(200); // a redelivery of what is already applied: acknowledge, do nothing
      return;
    }
    processed.set(event.id, String((event.data.object as { status?: string }).status));
    handled++;
    res.sendStatus(200);
  });
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const m = await h.newMerchant('Express');
  secretOf.current = await configureWebhook(h, m, `http://127.0.0.1:${port}/webhooks/payments`);
  const id = await completedWidget(h, m);
  const [ev] = await until(async () => {
    const l = await eventsOf(h, m, id);
    return l[0]?.delivery_status === 'delivered' ? l : undefined;
  }, 'delivered to the Express receiver');
  t.equal(processed.get(ev.id), 'completed');
  await h.as(m, 'POST', `/events/${ev.id}/redeliver`);
  await until(async () => (await h.as(m, 'GET', `/events/${ev.id}`)).body.attempts.length === 2, 'the redelivery');
  t.equal(handled, 1, 'the redelivery was acknowledged without being applied twice');
  const bad = await fetch(`http://127.0.0.1:${port}/webhooks/payments`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': 'sha256=00', 'x-service-timestamp': String(Math.floor(Date.now() / 1000)) }, body: '{}',
  });
  t.equal(bad.status, 400, 'a forged delivery is refused');
});
