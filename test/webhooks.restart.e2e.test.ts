// The retry schedule is durable: stop the service mid-schedule, start a new one on the same
// database, and the schedule continues there; nothing acknowledged is delivered again. Both lives
// run on one manual clock: a retry is due when the test moves the clock an hour, never after a
// wait, and "nothing more is sent" is "no delivery job left" rather than a pause.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { randomUUID } from 'node:crypto';
import {
  startReceiver, until, widgetResource, completedWidget, configureWebhook, eventsOf, appendWidget, widgetCreated, widgetCompleted,
} from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';
import { ManualClock } from '../infra/clock.ts';
import { readCheckpoint } from '../infra/checkpoints.ts';
import { FORWARDER } from '../workers/event-forwarder.ts';

registerWebhookResource(widgetResource);
const HOUR = 3600_000;
const env = { WEBHOOK_RETRY_SCHEDULE: '3600,3600,3600,3600,3600,3600', WEBHOOK_TIMEOUT_MS: '2000' };
const clock = new ManualClock();

t.test('stop mid-schedule, restart on the same database: the schedule goes on, acknowledged events are not resent', async (t) => {
  const failFirst = new Map<string, number>();
  const rx = await startReceiver((d) => {
    const id = JSON.parse(d.body).data.id as string;
    const left = failFirst.get(id) ?? 0;
    if (left > 0) {
      failFirst.set(id, left - 1);
      return { status: 500 };
    }
    return { status: 200 };
  });
  t.teardown(() => rx.close());

  const first = await startTestApp({ env, clock });
  let second: TestApp | undefined;
  t.teardown(async () => {
    if (second) await second.stop();
    await first.stop();
  });
  const m = await first.newMerchant('Restart');
  const secret = await configureWebhook(first, m, rx.url);

  const acked = await completedWidget(first, m);
  await until(async () => (await eventsOf(first, m, acked))[0]?.delivery_status === 'delivered', 'the first event acknowledged');

  const alsoAcked = await completedWidget(first, m);
  const retried = randomUUID();
  failFirst.set(retried, 2);
  await appendWidget(first, retried, [widgetCreated(m), widgetCompleted()]);
  const afterOne = await until(async () => {
    const [e] = await eventsOf(first, m, retried);
    return e?.attempt_count === 1 ? e : undefined;
  }, 'the first failed attempt');
  await until(async () => (await eventsOf(first, m, alsoAcked))[0]?.delivery_status === 'delivered', 'the second event acknowledged');
  t.equal(afterOne.delivery_status, 'pending');
  t.ok(afterOne.next_attempt_at, 'a retry is scheduled');

  await first.app.stop();
  const jobs = await first.database.db.knex('jobs').where({ kind: 'webhook.delivery' });
  // One delivery per (event, endpoint); the operator's URL is the first endpoint, id = the merchant id.
  t.same(jobs.map((j: any) => j.key), [`auto:${afterOne.id}:${m.merchantId}`], 'the retry is kept in the database while nothing runs');
  const receivedBefore = rx.deliveries.length;
  clock.advance(HOUR); // the retry is due while nothing runs
  t.equal(rx.deliveries.length, receivedBefore, 'nothing is sent while the service is down');

  second = await startTestApp({ env, shareWith: first, clock });
  await until(async () => (await eventsOf(second!, m, retried))[0]?.attempt_count === 2, 'the retry due at the restart made');
  clock.advance(HOUR);
  const done = await until(async () => {
    const [e] = await eventsOf(second!, m, retried);
    return e?.delivery_status === 'delivered' ? e : undefined;
  }, 'delivered after the restart');
  t.same(done.attempts.map((a: any) => [a.attempt, a.status_code]), [[1, 500], [2, 500], [3, 200]], 'the schedule continued where it was');
  t.ok(Date.parse(done.attempts[1].attempted_at) - Date.parse(done.attempts[0].attempted_at) >= HOUR, 'the retry kept its delay');

  // Nothing more can be sent: no delivery job is left, and the new life has forwarded (and its
  // recorder seen again) every event after the checkpoint of the first.
  const knex = second.app.services.knex;
  await until(async () => (await knex('jobs').where({ kind: 'webhook.delivery' })).length === 0, 'no delivery job left');
  const head = await second.app.services.store.head();
  await until(async () => (await readCheckpoint(knex, FORWARDER)) >= head, 'the new life forwarded every event');
  const byId = new Map<string, number>();
  for (const d of rx.deliveries) {
    // Signed at the manual clock's instants, which span the two hours the test moved it.
    const ev = verifyWebhook(d.body, d.headers, secret, { now: clock.now(), toleranceSeconds: 3 * 3600 });
    byId.set(ev.data.id, (byId.get(ev.data.id) ?? 0) + 1);
  }
  t.equal(byId.get(acked), 1, 'the event acknowledged before the restart was not delivered again');
  t.equal(byId.get(alsoAcked), 1);
  t.equal(byId.get(retried), 3, 'the retried event: two failures and one success');
  t.equal(rx.deliveries.length, 5, 'three events, five deliveries in all');
  const rows = await second.app.services.knex('webhook_events').where({ merchant_id: m.merchantId });
  t.equal(rows.length, 3, 'the restart recorded no event twice');
  t.ok(rows.every((r: any) => r.delivery_status === 'delivered'));
});
