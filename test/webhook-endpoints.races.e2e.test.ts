// Issue 40 point 8: two races on webhook endpoints, each forced deterministically by wrapping the
// event store's append (what another process, or a lost connection, does at that instant).
// - A retried create resurrected a deleted endpoint: the first POST's append committed but its
//   answer was lost (a 5xx; the key keeps its resource id), the merchant deleted the endpoint, and
//   the retry with the same Idempotency-Key made it again with a new secret. It must stay deleted.
// - The operator's rotate-secret raced the adoption of a URL set before endpoints: the rotation was
//   written on the merchant stream while another process adopted the URL, with the old secret, as
//   the first endpoint; the secret answered never signed. A rotation answered must be in force.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, until, widgetResource, completedWidget, configureWebhook } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';
import { merchantDecider } from '../domain/merchant.ts';
import { endpointsDecider } from '../domain/webhook-endpoints.ts';
import type { EventStore } from '../infra/eventstore/types.ts';

registerWebhookResource(widgetResource);
const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

/** Runs `around` in place of the store's next append that `matches`, once; the real append is passed in. */
function interceptNextAppend(
  matches: (appends: Parameters<EventStore['append']>[0]) => boolean,
  around: (real: () => ReturnType<EventStore['append']>) => ReturnType<EventStore['append']>,
): () => void {
  const store = s.store;
  const original = store.append.bind(store);
  const restore = () => { store.append = original; };
  store.append = async (appends, opts) => {
    if (!matches(appends)) return original(appends, opts);
    restore();
    return around(() => original(appends, opts));
  };
  return restore;
}

t.test('a create retried with its Idempotency-Key after the endpoint was deleted does not bring it back', async (t) => {
  const m = await h.newMerchant('Deletes');
  const key = randomUUID();
  const body = { url: 'https://hooks.example.com/resurrect' };
  const restore = interceptNextAppend((a) => a.some((x) => x.streamId === `webhook_endpoints-${m.merchantId}`), async (real) => {
    await real();
    throw new Error('connection lost after COMMIT'); // the commit happened; the answer is lost
  });
  t.teardown(restore);
  const first = await h.as(m, 'POST', '/webhook-endpoints', body, { idem: key });
  t.ok(first.status >= 500, `the first attempt's answer is lost (${first.status})`);
  const [made, ...none] = (await h.as(m, 'GET', '/webhook-endpoints')).body.data as Array<{ id: string }>;
  t.ok(made && none.length === 0, 'its endpoint was made');
  t.equal((await h.as(m, 'DELETE', `/webhook-endpoints/${made!.id}`)).status, 204, 'the merchant deletes it');

  const retry = await h.as(m, 'POST', '/webhook-endpoints', body, { idem: key });
  t.equal(retry.status, 404, 'the retry answers that it is gone');
  t.equal(retry.body.error?.code, 'not_found');
  t.notMatch(retry.text, /whsec_/, 'no new secret');
  t.same((await h.as(m, 'GET', '/webhook-endpoints')).body.data, [], 'it stays deleted');
  const again = await h.as(m, 'POST', '/webhook-endpoints', body, { idem: key });
  t.match({ status: again.status, replayed: again.body._meta?.idempotency_replayed }, { status: 404, replayed: true }, 'the same answer, replayed');
  t.same((await h.as(m, 'GET', '/webhook-endpoints')).body.data, []);
});

t.test("the operator's rotate-secret racing the adoption of the merchant's URL answers the secret that signs", async (t) => {
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant('Rotates while adopted');
  await configureWebhook(h, m, rx.url); // before any endpoint event: the URL lives on the merchant stream
  const endpointsStream = `webhook_endpoints-${m.merchantId}`;
  // Another process adopts the URL (with the secret in force) just before the rotation is written.
  const restore = interceptNextAppend((a) => a.some((x) => x.streamId === `merchant-${m.merchantId}`), async (real) => {
    const merchant = (await s.aggregates.load(`merchant-${m.merchantId}`, merchantDecider)).state;
    const adopt = endpointsDecider.decide({
      type: 'Adopt', data: { endpointId: m.merchantId, url: merchant.webhookUrl!, sealedSecret: merchant.webhookSecretSealed!, at: new Date().toISOString() },
    }, endpointsDecider.initialState());
    await s.store.append([{ streamId: endpointsStream, expectedVersion: 0, events: adopt.map((e) => ({ type: e.type, data: e.data as unknown as Record<string, unknown> })) }]);
    return real();
  });
  t.teardown(restore);
  const rotated = await h.admin('POST', `/admin/merchants/${m.merchantId}/webhook/rotate-secret`);
  t.equal(rotated.status, 200);
  const secret = rotated.body.signing_secret as string;
  t.same(((await h.as(m, 'GET', '/webhook-endpoints')).body.data as Array<{ id: string }>).map((e) => e.id), [m.merchantId], 'the URL was adopted meanwhile');

  await completedWidget(h, m);
  const d = await until(() => rx.deliveries[0], 'the delivery');
  let verified = true;
  try {
    verifyWebhook(d.body, d.headers, secret);
  } catch {
    verified = false;
  }
  t.ok(verified, 'the delivery verifies with the secret the rotation answered');
});
