// The test webhook aggregate as a specification: given these events, when this command, then these events.
import t from 'tap';
import { webhookTestDecider, type WebhookTestCommand, type WebhookTestEvent } from '../domain/webhook-test.ts';
import { deciderSpec } from './helpers/spec.ts';

const TEST = '88888888-8888-4888-8888-888888888888';
const MERCHANT = '22222222-2222-4222-8222-222222222222';
const AT = '2026-06-01T10:00:00.000Z';

const tests = deciderSpec(webhookTestDecider);
const request = (at = AT): WebhookTestCommand => ({ type: 'RequestWebhookTest', data: { testId: TEST, merchantId: MERCHANT, at } });
const requested: WebhookTestEvent = { type: 'webhook.test', data: { test_id: TEST, merchant_id: MERCHANT, at: AT } };

t.test('given nothing, when a test is requested, then one webhook.test event', async (t) => {
  tests.given([]).when(request()).then(t, [requested]);
});

t.test('given the test, when requested again with the same id, then nothing (a retry sends no second test)', async (t) => {
  tests.given([requested]).when(request('2026-06-01T10:00:05.000Z')).thenNothing(t);
});
