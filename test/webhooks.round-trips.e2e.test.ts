// Webhook recording and delivery in few round trips (bench issue 8: a transfer's three webhooks cost
// about 45 statements). Recording a domain event's webhook rows is one statement, an attempt is one
// read of the event (its predecessor's state joined) and one statement recording it, and the
// merchant's URL and secret come from the merchant's stream (never from a read model the recorder
// would have to wait for: webhooks.fresh-target). The order per resource and the retry schedule
// are covered by webhooks.delivery; here, the counts.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import {
  startReceiver, until, widgetResource, appendWidget, widgetCreated, widgetCompleted, widgetStep, configureWebhook,
  eventsOf,
} from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { JOB_KIND } from '../commands/webhook-redeliveries.ts';

registerWebhookResource(widgetResource);
const h = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05,0.05', WEBHOOK_TIMEOUT_MS: '2000' } });
t.teardown(() => h.stop());

/** Claims of webhook delivery jobs (the scheduler's UPDATE naming the kind) seen by counting(). */
const deliveryClaims: string[] = [];

/** Statements run on the service's knex while `fn` runs, by the first words that name them. */
async function counting(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const on = (q: { sql: string; bindings?: unknown[] }) => {
    const text = q.sql.replace(/\s+/g, ' ').trim();
    seen.push(text);
    if (text.startsWith('UPDATE jobs SET locked_until') && (q.bindings ?? []).includes(JOB_KIND)) deliveryClaims.push(text);
  };
  h.app.services.knex.on('query', on);
  try {
    await fn();
  } finally {
    h.app.services.knex.removeListener('query', on);
  }
  return seen;
}

const touching = (sql: string[], table: string) => sql.filter((q) => q.includes(table));

t.test('three webhook events of one resource: at most one statement to record each, two per delivered attempt', async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Round trips');
  await configureWebhook(h, m, rx.url);
  const id = randomUUID();
  const sql = await counting(async () => {
    await appendWidget(h, id, [widgetCreated(m), widgetStep('a')]);
    await until(() => rx.deliveries.length >= 1, 'the first delivery');
    await appendWidget(h, id, [widgetStep('b'), widgetCompleted()]);
    await until(() => rx.deliveries.length >= 3, 'three deliveries');
    await until(async () => (await eventsOf(h, m, id)).every((e) => e.delivery_status === 'delivered'), 'all delivered');
  });
  t.same(rx.deliveries.map((d) => d.headers['x-service-event']), ['widget.step.completed', 'widget.step.completed', 'widget.completed'], 'in order');
  const recorded = sql.filter((q) => q.includes('record_webhook_events_fanout_leased('));
  const attempts = sql.filter((q) => q.includes('record_webhook_delivery_attempt_leased('));
  // At most one each (events recorded within one turn share one; a redelivered message may add one).
  t.ok(recorded.length >= 1 && recorded.length <= 4, `recording: ${recorded.length} statements for 3 events`);
  t.equal(attempts.length, 3, 'one statement records each attempt');
  t.equal(sql.filter((q) => /insert into "?webhook_attempts/i.test(q)).length, 0, 'no separate statement writes an attempt row');
  const reads = sql.filter((q) => q.startsWith('SELECT e.*, d.delivery_status AS d_status'));
  t.equal(reads.length, 3, 'one read per attempt, the delivery and its predecessor joined');
  t.equal(touching(sql, 'from "merchants"').length, 0, 'the merchant\'s URL and secret come from its stream, not the read model');
  // Issue 44 (migration 035): the first attempt's job comes back leased from the recording, each
  // successor's from its predecessor's recorded attempt; none waits for a claim of its own.
  t.same(deliveryClaims, [], 'no claim of a delivery job: each came back leased with the statement that made it');
});

