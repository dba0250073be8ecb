// A test webhook asked for from the merchant dashboard: one stream per request (`webhook_test-<id>`)
// holding one `webhook.test` event. It goes through the normal webhook machinery (recorded, signed,
// retried, listed by GET /events, redeliverable) so a merchant can prove their receiver works before
// any money moves. It carries no money and no customer data.
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';

export const WEBHOOK_TEST_EVENT = 'webhook.test';

export type WebhookTestEvent = DomainEvent<'webhook.test', { test_id: string; merchant_id: string; at: string }>;

export interface WebhookTestState {
  exists: boolean;
  id: string;
  merchant_id: string;
  created_at: string;
}

/** The one thing that may be asked: send a test event (a plain value; the id and the time arrive in it). */
export type WebhookTestCommand = { type: 'RequestWebhookTest'; data: { testId: string; merchantId: string; at: string } };

export const webhookTestDecider = {
  initialState: (): WebhookTestState => ({ exists: false, id: '', merchant_id: '', created_at: '' }),
  evolve(s: WebhookTestState, e: WebhookTestEvent): WebhookTestState {
    switch (e.type) {
      case 'webhook.test':
        return { exists: true, id: e.data.test_id, merchant_id: e.data.merchant_id, created_at: e.data.at };
      default:
        return unreachable(e.type);
    }
  },
  decide(command: WebhookTestCommand, s: WebhookTestState): WebhookTestEvent[] {
    switch (command.type) {
      case 'RequestWebhookTest': {
        // A test id names one request, so a retry with the same id adds nothing.
        if (s.exists) return [];
        const c = command.data;
        return [{ type: 'webhook.test', data: { test_id: c.testId, merchant_id: c.merchantId, at: c.at } }];
      }
      default:
        return unreachable(command.type);
    }
  },
} satisfies CommandDecider<WebhookTestState, WebhookTestEvent, WebhookTestCommand>;

/** The snapshot merchants receive as `data.object`. */
export function renderWebhookTest(s: WebhookTestState): Record<string, unknown> {
  return {
    id: s.id,
    merchant_id: s.merchant_id,
    message: 'A test event sent from the merchant dashboard. Answer 2xx to acknowledge it; it changes nothing.',
    created_at: s.created_at,
  };
}
