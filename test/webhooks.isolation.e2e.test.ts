// One merchant's endpoint that hangs until the time-out must not delay another merchant's
// deliveries: a few of its attempts are in flight at most, the others wait their turn. The time-out
// is long enough (10 s) that the other merchant's deliveries arrive before it on a loaded machine
// too: what is asserted is that they all arrived while every hanging attempt was still under way.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, until, widgetResource, completedWidget, configureWebhook, eventsOf } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { PER_ENDPOINT_CONCURRENCY } from '../workers/webhooks/delivery.ts';

registerWebhookResource(widgetResource);
const TIMEOUT_MS = 10_000;
const h = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
t.teardown(() => h.stop());

t.test('a hanging endpoint holds a bounded number of attempts; others are delivered promptly', async (t) => {
  const dead = await startReceiver(() => ({ hang: true }));
  t.teardown(() => dead.close());
  const alive = await startReceiver();
  t.teardown(() => alive.close());
  const slow = await h.newMerchant('Hangs');
  const fast = await h.newMerchant('Answers');
  await configureWebhook(h, slow, dead.url);
  await configureWebhook(h, fast, alive.url);

  const slowIds: string[] = [];
  for (let i = 0; i < 12; i++) slowIds.push(await completedWidget(h, slow));
  await until(() => dead.deliveries.length >= PER_ENDPOINT_CONCURRENCY, 'the hanging endpoint to be busy');

  const fastIds: string[] = [];
  for (let i = 0; i < 6; i++) fastIds.push(await completedWidget(h, fast));
  await until(() => alive.deliveries.length === 6, "the other merchant's deliveries");
  const ended = (await Promise.all(slowIds.map((id) => eventsOf(h, slow, id)))).flat().flatMap((e) => e.attempts);
  t.same(ended, [], 'delivered while every attempt at the hanging endpoint was still under way');
  t.equal(dead.deliveries.length, PER_ENDPOINT_CONCURRENCY, `at most ${PER_ENDPOINT_CONCURRENCY} attempts in flight to the hanging endpoint`);
  t.same(new Set(alive.deliveries.map((d) => JSON.parse(d.body).data.id)), new Set(fastIds));

  // The hanging attempts end at the time-out and are recorded as such, then retried on schedule.
  const timedOut = await until(async () => {
    const all = await Promise.all(slowIds.map((id) => eventsOf(h, slow, id)));
    const attempts = all.flatMap((l) => l.flatMap((e) => e.attempts));
    return attempts.length >= PER_ENDPOINT_CONCURRENCY ? attempts : undefined;
  }, 'the timed-out attempts');
  for (const a of timedOut) {
    t.match(a, { status_code: null, succeeded: false, error: `timed out after ${TIMEOUT_MS} ms` });
    // The upper bound only says "not much longer" (a loaded machine runs timers late).
    t.ok(a.duration_ms >= TIMEOUT_MS - 50 && a.duration_ms < TIMEOUT_MS + 5000, `lasted the time-out (${a.duration_ms} ms)`);
  }
  const all = (await Promise.all(slowIds.map((id) => eventsOf(h, slow, id)))).flat();
  const tried = all.filter((e) => e.attempt_count > 0);
  t.ok(tried.length >= PER_ENDPOINT_CONCURRENCY);
  for (const e of tried) {
    t.equal(e.delivery_status, 'pending', 'still pending: retried later');
    t.ok(Date.parse(e.next_attempt_at) > Date.now() + 30_000, 'the next attempt is about a minute away (first retry)');
  }
});
