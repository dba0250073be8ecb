// The webhook recorder and the delivery attempts take the merchant's URL and secret from its own
// stream, not from the read models: a webhook is recorded and delivered while the projector is
// behind (the recorder used to wait for it: most of a transfer's webhook latency, bench issue 8), and
// a URL set a moment before an event is the one that event goes to.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, until, widgetResource, appendWidget, widgetCreated, widgetCompleted, configureWebhook } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';

registerWebhookResource(widgetResource);
const h = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '60,60,60,60,60,60', WEBHOOK_TIMEOUT_MS: '2000' } });
t.teardown(() => h.stop());

t.test('with the read models stopped, an event goes to the URL and secret set just before it, without waiting', async (t) => {
  const first = await startReceiver();
  const second = await startReceiver();
  t.teardown(async () => { await first.close(); await second.close(); });
  const m = await h.newMerchant('Lagging read models');
  await configureWebhook(h, m, first.url);
  await appendWidget(h, randomUUID(), [widgetCreated(m), widgetCompleted()]);
  await until(() => first.deliveries.length === 1, 'the delivery to the first URL');
  await h.app.services.projector.stop();
  t.teardown(() => h.app.services.projector.start());
  // The operator's change waits (in vain) for the stopped read models, then answers.
  const secret = await configureWebhook(h, m, second.url);
  // From here every read-model wait is watched: a wait for the stopped projector stays pending,
  // then fails after its 5 s time-out.
  const projector = h.app.services.projector;
  const waitFor = projector.waitFor.bind(projector);
  const waits: Array<Promise<boolean>> = [];
  projector.waitFor = (position, timeoutMs) => {
    const w = waitFor(position, timeoutMs);
    waits.push(w);
    return w;
  };
  t.teardown(() => { projector.waitFor = waitFor; });
  await appendWidget(h, randomUUID(), [widgetCreated(m), widgetCompleted()]);
  const d = await until(() => second.deliveries[0], 'the delivery to the new URL');
  const outcomes = await Promise.all(waits.map((w) => Promise.race([w, Promise.resolve('still waiting')])));
  t.ok(outcomes.every((o) => o === true), `delivered with no read-model wait under way or timed out (${JSON.stringify(outcomes)})`);
  t.doesNotThrow(() => verifyWebhook(d.body, d.headers, secret), 'signed with the new secret');
  t.equal(first.deliveries.length, 1, 'nothing more to the old URL');
});
