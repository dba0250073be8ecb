// The webhook worker (issue 5): a durable bus consumer on the webhook event types records one webhook event per
// terminal domain event (before any delivery is attempted), and the durable scheduler runs the
// delivery attempts and their retry schedule. See store.ts (states, order) and delivery.ts.
import type { Services } from '../../commands/services.ts';
import { neverGiveUp } from '../never-give-up.ts';
import type { Worker } from '../worker.ts';
import { subjectOf, type ForwardedEvent } from '../../infra/bus/forwarded-event.ts';
import { webhookEventTypes, webhookResourceOf } from './resources.ts';
import { recordWebhookEvent } from './store.ts';
import { deliveryHandler, OVERALL_CONCURRENCY } from './delivery.ts';
import { JOB_KIND, type DeliveryJob } from '../../commands/webhook-redeliveries.ts';

export const WEBHOOK_RECORDER = 'webhook-recorder';

export const webhookWorker: Worker = {
  name: 'webhooks',
  consumes: () => webhookEventTypes(),
  async start(s: Services) {
    const deliver = deliveryHandler(s);
    s.scheduler.register(JOB_KIND, (job) => deliver(job as typeof job & { payload: DeliveryJob }), {
      concurrency: OVERALL_CONCURRENCY,
      // An attempt lasts at most the time-out; the lease leaves room to record it.
      leaseMs: s.config.webhookTimeoutMs + s.config.jobLeaseMs,
      errorBackoffMs: (n) => Math.min(60_000, 1000 * 2 ** Math.min(n, 6)),
    });
    const consumer = await s.bus.consume(neverGiveUp(s.log, {
      durable: WEBHOOK_RECORDER,
      // Only the webhook event types: the bus delivers (and this worker acknowledges) nothing else.
      subjects: webhookEventTypes().map(subjectOf),
      concurrency: 8,
      handler: async (msg) => {
        const ev = msg.data as ForwardedEvent;
        if (!webhookResourceOf(ev.stream_id, ev.type)) return;
        await recordWebhookEvent(s, ev, { firstDelivery: msg.deliveryCount === 1 });
      },
    }));
    return async () => {
      await consumer.stop();
    };
  },
};
