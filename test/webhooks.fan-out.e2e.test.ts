// Issue 40 point 2c (migration 026): a webhook event's fan-out (a delivery and a job per endpoint)
// is written after the event has committed, outside the event feed's lock (one for every merchant
// then; each merchant's own since migration 034). A fan-out
// held up (here: webhook_deliveries locked against writes from a connection of the test's own) must
// not hold any other merchant's events out of the feed; before, the recording statement held the
// feed lock while it waited, and every other merchant's recording waited behind it.
// And the crash between the two commits: an event left with its fan-out undone is fanned out when
// its message comes again, or with the next event of its resource, in the resource's order.
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { startReceiver, until, sleep, widgetResource, appendWidget, widgetCreated, widgetStep, widgetCompleted } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { recordWebhookEvent } from '../workers/webhooks/store.ts';
import { toMessage } from '../workers/event-forwarder.ts';
import { busySessions } from './helpers/db.ts';
import { settles, WAIT_BOUND_MS } from './helpers/wait.ts';

// Registered after the start: the service's recorder does not consume widget events, so only the
// calls below record them, each when the test says.
const h = await startTestApp();
t.teardown(() => h.stop());
registerWebhookResource(widgetResource);
const s = h.app.services;

/**
 * `p`, bounded: a statement that never ends fails naming the step and what every session of the
 * database was waiting on then (the waits below are on locks the test itself holds).
 */
const step = <T>(what: string, p: Promise<T>): Promise<T> => settles(what, p, undefined, () => busySessions(h.database.url));

/**
 * A connection of the test's own holding webhook_deliveries against writes (reads go on) until
 * released, and one outside any transaction that watches the others (pg_stat_activity is read once
 * per transaction: the holder would see the moment of its first look for ever). Released once,
 * whoever asks first: the test, or its teardown after a failure (a table left held would make the
 * app's stop wait for ever).
 */
async function holdDeliveries(t: Test) {
  // Every statement of theirs bounded too: one that never ends fails instead of holding the file up.
  const client = () => new pg.Client({ connectionString: h.database.url, query_timeout: WAIT_BOUND_MS });
  const [c, watch] = [client(), client()];
  await step('webhook_deliveries held', (async () => {
    await Promise.all([c.connect(), watch.connect()]);
    await c.query('BEGIN');
    await c.query('LOCK TABLE webhook_deliveries IN SHARE MODE');
  })());
  let released: Promise<void> | undefined;
  const release = () => (released ??= step('the hold released', (async () => {
    await c.query('ROLLBACK');
    await Promise.all([c.end(), watch.end()]);
  })()));
  t.teardown(release);
  return { client: watch, release };
}

/** The recording statements waiting for a lock (their fan-outs, held up by holdDeliveries). */
const WAITING_RECORDINGS = `FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
  AND query LIKE '%record_webhook_events_fanout%'`;

/** The backend of a recording statement waiting for a lock (its fan-out, held up by holdDeliveries). */
async function waitingRecorder(c: pg.Client): Promise<number> {
  return until(async () => (await c.query<{ pid: number }>(
    `SELECT pid ${WAITING_RECORDINGS}`,
  )).rows[0]?.pid, 'a recording statement waiting in its fan-out');
}

async function lastEvent(widgetId: string) {
  const stream = await s.store.readStream(`widget-${widgetId}`);
  return stream[stream.length - 1]!;
}

const feedHas = async (m: MerchantCreds, eventId: string) =>
  ((await h.as(m, 'GET', '/events?order=asc&limit=100')).body.data as Array<{ id: string }>).some((e) => e.id === eventId);

async function merchantWithEndpoint(name: string, url: string): Promise<MerchantCreds> {
  const m = await h.newMerchant(name);
  const r = await h.as(m, 'POST', '/webhook-endpoints', { url }, { idem: true });
  if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${r.text}`);
  return m;
}

t.test("a merchant's fan-out held up keeps no other merchant's event out of the feed", async (t) => {
  const rxA = await startReceiver();
  const rxB = await startReceiver();
  t.teardown(() => Promise.all([rxA.close(), rxB.close()]));
  const a = await merchantWithEndpoint('Held fan-out', rxA.url);
  const b = await merchantWithEndpoint('Other', rxB.url);
  const aEvent = await lastEvent(await appendWidget(h, randomUUID(), [widgetCreated(a), widgetCompleted()]));
  const bEvent = await lastEvent(await appendWidget(h, randomUUID(), [widgetCreated(b), widgetCompleted()]));

  const held = await holdDeliveries(t);
  const recordingA = recordWebhookEvent(s, toMessage(aEvent), { firstDelivery: true });
  const recorderA = await waitingRecorder(held.client);
  t.ok(await feedHas(a, aEvent.id), "the held merchant's event is in its feed already: it committed before its fan-out");
  const recordingB = recordWebhookEvent(s, toMessage(bEvent), { firstDelivery: true });
  // Either the other merchant's event reaches its feed, or its recording waits for the feed lock
  // (an advisory lock: the one the held recording would still hold, were its fan-out under it).
  const outcome = await until(async () => {
    if (await feedHas(b, bEvent.id)) return 'in its feed';
    const waits = await held.client.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'`);
    return waits.rowCount! > 0 ? 'waiting for the feed lock' : undefined;
  }, "the other merchant's event in its feed, or its recording waiting");
  t.equal(outcome, 'in its feed', "the other merchant's event reaches its feed while the first merchant's fan-out waits");
  // The other merchant's fan-out waits on the held deliveries too: the first is one of those waiting.
  const waiting = (await held.client.query<{ pid: number }>(
    `SELECT pid ${WAITING_RECORDINGS}`,
  )).rows.map((r) => r.pid);
  t.ok(waiting.includes(recorderA), 'the first fan-out was waiting all along');

  await held.release();
  t.same(await step('both recordings', Promise.all([recordingA, recordingB])), [1, 1], 'each recorded once');
  await until(() => rxA.deliveries.length === 1 && rxB.deliveries.length === 1, 'both delivered once the fan-outs go on');
});

/**
 * Records the event with its fan-out held up, then cancels the recording mid-fan-out: what a crash
 * between the two commits leaves (the recorder's process, or its connection, gone).
 */
async function recordedWithoutFanOut(t: Test, eventMessage: ReturnType<typeof toMessage>): Promise<void> {
  const held = await holdDeliveries(t);
  // Its outcome watched from the start: it fails as soon as it is cancelled, before anything awaits it.
  let outcome: 'recorded' | 'failed' | undefined;
  void recordWebhookEvent(s, eventMessage, { firstDelivery: true }).then(() => 'recorded' as const, () => 'failed' as const).then((o) => { outcome = o; });
  await waitingRecorder(held.client);
  // Every fan-out waiting on the held table is cancelled, again until the recording has ended: a
  // cancel is a signal to whatever its backend runs at that instant, and one that reached no waiting
  // statement would leave the recording waiting for a release that comes only after it.
  await until(async () => {
    await held.client.query(`SELECT pg_cancel_backend(pid) ${WAITING_RECORDINGS}`);
    return outcome;
  }, 'the recording cut short in its fan-out');
  t.equal(outcome, 'failed', 'the recording fails: its message is not acknowledged and will come again');
  await held.release();
  const row = await s.knex('webhook_events').where({ id: eventMessage.id }).first('fanout_endpoints');
  t.ok(row?.fanout_endpoints, 'the event committed, its fan-out not');
  t.equal((await s.knex('webhook_deliveries').where({ event_id: eventMessage.id })).length, 0, 'no delivery yet');
}

t.test('a fan-out cut short: done with the next event of the resource, in order; or when the message comes again', async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await merchantWithEndpoint('Cut short', rx.url);
  const id = randomUUID();
  const first = await lastEvent(await appendWidget(h, id, [widgetCreated(m), widgetStep('a')]));
  await recordedWithoutFanOut(t, toMessage(first));
  await sleep(300);
  t.equal(rx.deliveries.length, 0, 'nothing is sent before its fan-out');

  const second = await lastEvent(await appendWidget(h, id, [widgetCompleted()]));
  t.equal(await step('the next event recorded', recordWebhookEvent(s, toMessage(second), { firstDelivery: true })), 1);
  await until(() => rx.deliveries.length === 2, 'both events of the resource delivered');
  t.same(rx.deliveries.map((d) => d.headers['x-service-webhook-id']), [first.id, second.id], 'the earlier one first: it was fanned out before the later');
  t.equal(await step('its message again', recordWebhookEvent(s, toMessage(first), { firstDelivery: false })), 0, 'its message again: nothing new');

  const other = await lastEvent(await appendWidget(h, randomUUID(), [widgetCreated(m), widgetCompleted()]));
  await recordedWithoutFanOut(t, toMessage(other));
  t.equal(await step('the message again', recordWebhookEvent(s, toMessage(other), { firstDelivery: false })), 0, 'the message again: the event is not recorded twice');
  await until(() => rx.deliveries.length === 3, 'and it is fanned out and delivered');
  t.equal(rx.deliveries[2]!.headers['x-service-webhook-id'], other.id);
  await sleep(300);
  t.equal(rx.deliveries.length, 3, 'each event delivered once');
  const row = await s.knex('webhook_events').where({ id: other.id }).first('fanout_endpoints', 'delivery_status');
  t.match(row, { fanout_endpoints: null, delivery_status: 'delivered' });
});
