// "Send test event" (merchant dashboard): appends a `webhook.test` event on a stream of its own; the
// webhook worker records and delivers it like any other webhook event.
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { webhookTestDecider, type WebhookTestCommand } from '../domain/webhook-test.ts';
import { streams } from './streams.ts';

/** Returns the test's id, which is also its webhook event's `data.id`. */
export async function sendTestWebhook(s: Services, merchantId: string, meta: EventMetadata, testId = randomUUID()): Promise<string> {
  const command: WebhookTestCommand = { type: 'RequestWebhookTest', data: { testId, merchantId, at: s.clock.now().toISOString() } };
  const { append } = await s.aggregates.execute(streams.webhookTest(testId), webhookTestDecider, command, meta);
  await s.awaitReadModels(append?.position);
  return testId;
}
