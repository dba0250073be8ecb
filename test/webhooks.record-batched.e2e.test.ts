// Webhook events recorded within one turn of the event loop are written by one statement, with or
// without a webhook URL; each call learns how many of its rows were new, and the events are
// delivered as when recorded one by one.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, until, widgetResource, appendWidget, widgetCreated, widgetCompleted, configureWebhook, eventsOf } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { recordWebhookEvent } from '../workers/webhooks/store.ts';
import { toMessage } from '../workers/event-forwarder.ts';

// Registered after the start: the service's recorder does not consume widget events, so only the
// calls below record them.
const h = await startTestApp();
t.teardown(() => h.stop());
registerWebhookResource(widgetResource);
const s = h.app.services;

const completedEvent = async (merchant: Parameters<typeof widgetCreated>[0]) => {
  const id = await appendWidget(h, randomUUID(), [widgetCreated(merchant), widgetCompleted()]);
  return { id, event: (await s.store.readStream(`widget-${id}`)).find((e) => e.type === 'widget.completed')! };
};

for (const configured of [false, true]) {
  t.test(`${configured ? 'with' : 'without'} a webhook URL: one statement for the calls of one turn, each told what was new`, async (t) => {
    const rx = await startReceiver();
    t.teardown(() => rx.close());
    const m = await h.newMerchant(configured ? 'Batched, configured' : 'Batched');
    if (configured) await configureWebhook(h, m, rx.url);
    const a = await completedEvent(m);
    const b = await completedEvent(m);
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => { if (/webhook_events/i.test(q.sql)) statements.push(q.sql); };
    s.knex.on('query', onQuery);
    const counts = await Promise.all([
      recordWebhookEvent(s, toMessage(a.event), { firstDelivery: true }),
      recordWebhookEvent(s, toMessage(b.event), { firstDelivery: true }),
      recordWebhookEvent(s, toMessage(a.event), { firstDelivery: true }), // the same event again, in the same turn
    ]);
    s.knex.off('query', onQuery);
    t.same(counts, [1, 1, 0], 'each event new once, for the first call that carried it');
    const writes = statements.filter((q) => /insert into|record_webhook_events/i.test(q));
    t.equal(writes.length, 1, `one statement for three calls (${writes.map((q) => q.slice(0, 40)).join(' | ')})`);
    const rows = [...await eventsOf(h, m, a.id), ...await eventsOf(h, m, b.id)];
    t.same(rows.map((r) => r.event), ['widget.completed', 'widget.completed'], 'one row per event');
    if (configured) {
      await until(() => rx.deliveries.length >= 2, 'both delivered');
      t.same(rx.deliveries.map((d) => d.headers['x-service-webhook-id']).sort(), [a.event.id, b.event.id].sort(), 'each delivered once');
    } else {
      t.ok(rows.every((r) => r.delivery_status === 'not_configured'), 'not configured');
    }
  });
}
