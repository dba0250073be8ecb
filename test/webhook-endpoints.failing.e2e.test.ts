// An endpoint whose attempts have all failed for 72 hours is disabled (CONTRACT.md §11); one success
// in between starts the count again. Time is a manual clock (infra/clock.ts), so no test waits 72 hours:
// the retry schedule is long in clock time, and only the clock moving makes retries due.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { startReceiver, until, widgetResource, completedWidget } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { ManualClock } from '../infra/clock.ts';

registerWebhookResource(widgetResource);
const clock = new ManualClock();
const h = await startTestApp({ clock, env: { WEBHOOK_RETRY_SCHEDULE: '3600,3600,3600,3600,3600,3600' } });
t.teardown(() => h.stop());
const HOUR = 3600_000;

const statusOf = async (m: MerchantCreds, id: string) => (await h.as(m, 'GET', `/webhook-endpoints/${id}`)).body.status as string;

/** A widget whose event is attempted (and answered) before this returns. */
async function attempted(m: MerchantCreds, rx: { deliveries: unknown[] }): Promise<void> {
  const before = rx.deliveries.length;
  await completedWidget(h, m);
  await until(() => rx.deliveries.length > before, 'the attempt');
  await h.app.services.scheduler.polled();
}

t.test('72 hours of failed attempts disable an endpoint; a success in between starts the count again', async (t) => {
  let ok = false;
  const rx = await startReceiver(() => ({ status: ok ? 200 : 500 }));
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Failing');
  const ep = (await h.as(m, 'POST', '/webhook-endpoints', { url: rx.url }, { idem: true })).body;

  await attempted(m, rx); // fails: the first failure
  clock.advance(71 * HOUR);
  await attempted(m, rx); // fails, 71 hours later
  t.equal(await statusOf(m, ep.id), 'enabled', 'failing for 71 hours: still enabled');
  ok = true;
  await attempted(m, rx); // a success
  ok = false;
  clock.advance(2 * HOUR);
  await attempted(m, rx); // fails: 73 hours after the first failure, but a success came between
  t.equal(await statusOf(m, ep.id), 'enabled', 'a success in between: the 72 hours start again');
  clock.advance(71 * HOUR);
  await attempted(m, rx);
  t.equal(await statusOf(m, ep.id), 'enabled', '71 hours since the last success');
  clock.advance(2 * HOUR);
  await attempted(m, rx);
  await until(async () => (await statusOf(m, ep.id)) === 'disabled', 'disabled after 72 hours of failures');

  const sent = rx.deliveries.length;
  clock.advance(2 * HOUR); // retries would be due now
  await completedWidget(h, m);
  await h.app.services.scheduler.polled();
  await new Promise((r) => setTimeout(r, 300));
  await h.app.services.scheduler.polled();
  t.equal(rx.deliveries.length, sent, 'a disabled endpoint gets nothing: no retry, no new event');
  const events = (await h.as(m, 'GET', '/events?limit=100')).body.data;
  t.notOk(events.some((e: any) => e.delivery_status === 'pending'), 'its pending deliveries ended');
});
