// The webhook event names merchants receive, per `data.type` of the envelope (the seed's section
// "Events", plus the dashboard's test event). The worker sends them (workers/webhooks/resources.ts)
// and the OpenAPI document lists them (api/openapi/webhooks.ts): one list, so they cannot differ.
import { WEBHOOK_TEST_EVENT } from './webhook-test.ts';

/** The seed's event names (section "Events"). */
export const SEED_WEBHOOK_EVENTS = {
  payin: ['payin.completed', 'payin.failed'],
  payout: ['payout.completed', 'payout.failed'],
  transfer: [
    'transfer.payin.completed', 'transfer.payin.failed',
    'transfer.payout.completed', 'transfer.payout.failed',
    'transfer.completed', 'transfer.failed',
  ],
} as const;

/** Beyond the seed: refunds (CONTRACT §9). */
export const REFUND_WEBHOOK_EVENTS = ['refund.completed', 'refund.failed'] as const;

/** Every event name by its `data.type`: the seed's, refunds', and `webhook.test` (`test`). */
export const WEBHOOK_EVENTS_BY_TYPE: Record<string, readonly string[]> = { ...SEED_WEBHOOK_EVENTS, refund: REFUND_WEBHOOK_EVENTS, test: [WEBHOOK_TEST_EVENT] };
