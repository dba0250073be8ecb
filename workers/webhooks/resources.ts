// Which streams produce webhook events, and how their snapshot is made. One entry per resource:
// its stream prefix, the envelope's `data.type`, the domain event types that are webhook events
// (terminal state changes, named exactly as merchants see them), the aggregate's decider and the
// pure view that gives the resource's API JSON. The snapshot (`data.object`) is the resource folded
// up to exactly the version of the webhook's domain event, so it shows the resource AT EVENT TIME,
// whenever the event is recorded or redelivered. A new resource (transfers) plugs in with one entry.
import type { Decider, DomainEvent } from '../../domain/decider.ts';
import type { RecordedEvent } from '../../infra/eventstore/types.ts';
import { payinDecider } from '../../domain/payin.ts';
import { payoutDecider } from '../../domain/payout.ts';
import { renderPayin } from '../../projections/views/payin.ts';
import { renderPayout } from '../../projections/views/payout.ts';
import { transferDecider } from '../../domain/transfer.ts';
import { renderTransfer } from '../../projections/views/transfer.ts';
import { renderWebhookTest, webhookTestDecider, WEBHOOK_TEST_EVENT } from '../../domain/webhook-test.ts';
import { REFUND_WEBHOOK_EVENTS, SEED_WEBHOOK_EVENTS } from '../../domain/webhook-events.ts';
import { refundDecider } from '../../domain/refund.ts';
import { renderRefund } from '../../projections/views/refund.ts';

export interface WebhookResource<S = any> {
  /** Stream id prefix, with its dash: `payin-`. The resource id is the rest of the stream id. */
  streamPrefix: string;
  /** `data.type` in the envelope: `payin`, `payout`, `transfer`. */
  type: string;
  /** Domain event types that are webhook events, in the seed's names (`payin.completed`, …). */
  events: readonly string[];
  decider: Decider<S, any>;
  /** The resource's API JSON (must carry `merchant_id`; must never carry an OTP or a secret). */
  render(state: S): Record<string, unknown>;
}

/** Keeps the decider's and the view's state types together. */
export function webhookResource<S, E extends DomainEvent>(r: {
  streamPrefix: string;
  type: string;
  events: readonly string[];
  decider: Decider<S, E>;
  render(state: S): Record<string, unknown>;
}): WebhookResource<S> {
  return r as WebhookResource<S>;
}


/** The resources that send webhooks. */
const resources: WebhookResource[] = [
  webhookResource({ streamPrefix: 'payin-', type: 'payin', events: SEED_WEBHOOK_EVENTS.payin, decider: payinDecider, render: renderPayin }),
  webhookResource({ streamPrefix: 'payout-', type: 'payout', events: SEED_WEBHOOK_EVENTS.payout, decider: payoutDecider, render: renderPayout }),
  webhookResource({ streamPrefix: 'transfer-', type: 'transfer', events: SEED_WEBHOOK_EVENTS.transfer, decider: transferDecider, render: renderTransfer }),
  // Refunds (CONTRACT §9): beyond the seed's events.
  webhookResource({ streamPrefix: 'refund-', type: 'refund', events: REFUND_WEBHOOK_EVENTS, decider: refundDecider, render: renderRefund }),
  // "Send test event" from the dashboard (domain/webhook-test.ts): beyond the seed's events.
  webhookResource({ streamPrefix: 'webhook_test-', type: 'test', events: [WEBHOOK_TEST_EVENT], decider: webhookTestDecider, render: renderWebhookTest }),
];

/** Adds a resource (module start-up, or a test's own resource); returns its removal. */
export function registerWebhookResource(r: WebhookResource): () => void {
  if (resources.some((x) => x.streamPrefix === r.streamPrefix)) throw new Error(`webhook resource ${r.streamPrefix} registered twice`);
  resources.push(r);
  return () => {
    const i = resources.indexOf(r);
    if (i >= 0) resources.splice(i, 1);
  };
}

/** Every domain event type that is a webhook event of some resource (what the recorder subscribes to). */
export function webhookEventTypes(): string[] {
  return [...new Set(resources.flatMap((r) => r.events))].sort();
}

export function resourceForStream(streamId: string): WebhookResource | undefined {
  return resources.find((r) => streamId.startsWith(r.streamPrefix) && streamId.length > r.streamPrefix.length);
}

/** The resource whose webhook this event is, or undefined when it is not a webhook event. */
export function webhookResourceOf(streamId: string, type: string): WebhookResource | undefined {
  const r = resourceForStream(streamId);
  return r && r.events.includes(type) ? r : undefined;
}

export const resourceIdOf = (r: WebhookResource, streamId: string) => streamId.slice(r.streamPrefix.length);

/** The resource folded up to (and including) `version`: the snapshot at that event's time. */
export function stateAt<S>(r: WebhookResource<S>, events: RecordedEvent[], version: number): S {
  let state = r.decider.initialState();
  for (const e of events) {
    if (e.version > version) break;
    state = r.decider.evolve(state, { type: e.type, data: e.data });
  }
  return state;
}
