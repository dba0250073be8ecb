// "Send test event" (merchant dashboard): appends a `webhook.test` event on a stream of its own; the
// webhook worker records and delivers it like any other webhook event.
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { requestWebhookTest, webhookTestDecider } from '../domain/webhook-test.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';

/** Returns the test's id, which is also its webhook event's `data.id`. */
export async function sendTestWebhook(s: Services, merchantId: string, meta: EventMetadata, testId = randomUUID()): Promise<string> {
  const streamId = streams.webhookTest(testId);
  const { append } = await s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, webhookTestDecider);
    const events = requestWebhookTest(loaded.state, { testId, merchantId, at: s.clock.now().toISOString() });
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: undefined };
  });
  await s.awaitReadModels(append?.position);
  return testId;
}
