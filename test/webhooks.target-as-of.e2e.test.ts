// The recorder takes the merchant's webhook URL as of the event it records: once this process has
// read the global order past that event (the event forwarder, the projector), the cached merchant
// state serves if it is as new as the newest merchant event read (no read of the merchant's stream:
// bench issue 8); a merchant event this process's cache has not seen (another process appended it),
// or an event this process has not read up to, sends the recorder to the stream.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, until, widgetResource, appendWidget, widgetCreated, widgetCompleted, configureWebhook, eventsOf } from './helpers/webhooks.ts';
import type { MerchantCreds } from './helpers/app.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { recordWebhookEvent } from '../workers/webhooks/store.ts';
import { webhookTargetAsOf } from '../workers/webhooks/targets.ts';
import { toMessage } from '../workers/event-forwarder.ts';
import { streams } from '../commands/streams.ts';

// Registered after the start: the service's recorder does not consume widget events, so only the
// calls below record them.
const h = await startTestApp();
t.teardown(() => h.stop());
registerWebhookResource(widgetResource);
const s = h.app.services;

/** A completed widget of the merchant, with the projector past it. */
async function completedWidgetEvent(m: MerchantCreds) {
  const id = await appendWidget(h, randomUUID(), [widgetCreated(m), widgetCompleted()]);
  const event = (await s.store.readStream(`widget-${id}`)).find((e) => e.type === 'widget.completed')!;
  return { id, event };
}

/** Records the event, returning the statements that named the merchant's stream. */
async function recordWatching(m: MerchantCreds, event: Parameters<typeof toMessage>[0], stream = streams.merchant(m.merchantId)): Promise<string[]> {
  const seen: string[] = [];
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
    if ((q.bindings ?? []).some((b) => b === stream || (Array.isArray(b) && b.includes(stream)))) seen.push(q.sql);
  };
  s.knex.on('query', onQuery);
  try {
    await recordWebhookEvent(s, toMessage(event), { firstDelivery: true });
  } finally {
    s.knex.off('query', onQuery);
  }
  return seen;
}

/** What another process does: a merchant event appended without this process's aggregate cache. */
async function configureBehindTheCache(m: MerchantCreds, url: string): Promise<bigint> {
  const r = await s.store.append([{
    streamId: streams.merchant(m.merchantId), expectedVersion: 'any',
    events: [{ type: 'merchant.webhook_configured', data: { url, signing_secret_sealed: s.secrets.encrypt('whsec_other_process'), at: new Date().toISOString() } }],
  }]);
  return r.position;
}

t.test('projector past the event, merchant cached: no read of the merchant stream', async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Cached target');
  await configureWebhook(h, m, rx.url);
  const first = await completedWidgetEvent(m);
  await recordWebhookEvent(s, toMessage(first.event), { firstDelivery: true }); // warms the cache
  // The first event's delivery attempt reads the merchant's stream (as it is now): let it finish, so
  // that the statements watched below are the recorder's alone.
  await until(async () => (await eventsOf(h, m, first.id))[0]?.delivery_status === 'delivered', 'the first delivered');
  const second = await completedWidgetEvent(m);
  t.ok(await s.projector.waitFor(second.event.position), 'read past the event');
  const reads = await recordWatching(m, second.event);
  t.same(reads, [], 'the merchant stream was not read');
  // The recording hands its delivery job to this process's scheduler at once (migration 035), and the
  // attempt reads the endpoint as it stands: let it finish, so the next watch is the recorder's alone.
  // The receiver sees the request before the worker records its answer: wait for the record.
  await until(async () => (await eventsOf(h, m, second.id))[0]?.delivery_status === 'delivered', 'the second delivered');
  t.same(await recordWatching(m, second.event, streams.webhookEndpoints(m.merchantId)), [],
    'nor its endpoints stream (none yet: remembered empty, and no endpoints event read since)');
  t.equal(rx.deliveries.length, 2, 'both delivered, once each');
});

t.test('a merchant event appended behind the cache is seen once the projector applied it', async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Configured elsewhere');
  const before = await completedWidgetEvent(m);
  await recordWebhookEvent(s, toMessage(before.event), { firstDelivery: true }); // caches "no URL"
  t.equal((await eventsOf(h, m, before.id))[0].delivery_status, 'not_configured');
  const configuredAt = await configureBehindTheCache(m, rx.url);
  t.ok(await s.projector.waitFor(configuredAt), 'the projector applied the configuration');
  const after = await completedWidgetEvent(m);
  t.ok(await s.projector.waitFor(after.event.position));
  const reads = await recordWatching(m, after.event);
  t.ok(reads.length >= 1, 'the stream was read: the cache was older than what the projector applied');
  t.equal((await eventsOf(h, m, after.id))[0].delivery_status !== 'not_configured', true, 'recorded as configured');
  await until(() => rx.deliveries.length === 1, 'delivered to the URL set by the other process');
});

t.test('an event this process has not read the global order up to: the stream is read', async (t) => {
  const m = await h.newMerchant('Not read up to');
  const e = await completedWidgetEvent(m);
  await recordWebhookEvent(s, toMessage(e.event), { firstDelivery: true }); // warms the cache
  t.ok(await s.projector.waitFor(e.event.position));
  const stream = streams.merchant(m.merchantId);
  let reads = 0;
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => { if ((q.bindings ?? []).includes(stream)) reads++; };
  s.knex.on('query', onQuery);
  t.teardown(() => s.knex.off('query', onQuery));
  await webhookTargetAsOf(s, m.merchantId, e.event.position);
  t.equal(reads, 0, 'read up to the event: from the cache');
  const ahead = s.merchantVersions.position + 1_000_000n;
  t.same(await webhookTargetAsOf(s, m.merchantId, ahead), { url: null, sealedSecret: null }, 'the same target');
  t.equal(reads, 1, 'beyond what this process has read: the stream was read');
});
