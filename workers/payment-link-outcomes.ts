// A payment link's payin reached its outcome: the link's place is freed (failed) or used for good
// (completed), so that `payments_count` and the `completed` status follow the payins. Driven by the
// payin's own events on the bus, like the transfer saga: at least once, and the link's decider
// ends a payin once (a redelivered outcome decides nothing), so nothing is kept in memory.
//
// Why not in the payin's settlement append (commands/wallet-settlements.ts): settlements are batched
// per wallet, and one batch may hold several payins of one link (an unlimited link); their link
// events would need deciding in order on one link state inside the batch. The place a pending payin
// holds is what keeps the link from over-selling, and it is taken atomically with the payin's
// create; its end may follow a moment later without breaking that rule.
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import { endLinkPayment } from '../commands/payment-links.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import { neverGiveUp } from './never-give-up.ts';

const OUTCOMES: Record<string, 'completed' | 'failed'> = { 'payin.completed': 'completed', 'payin.failed': 'failed' };

export const paymentLinkOutcomes: Worker = {
  name: 'payment-link-outcomes',
  consumes: () => Object.keys(OUTCOMES),
  async start(s: Services) {
    const consumer = await s.bus.consume(neverGiveUp(s.log, {
      durable: 'payment-link-outcomes',
      subjects: paymentLinkOutcomes.consumes!().map(subjectOf),
      concurrency: 16,
      handler: async (msg) => {
        const e = msg.data as ForwardedEvent;
        await endLinkPayment(s, e.stream_id.slice('payin-'.length), OUTCOMES[e.type]!, {
          actor: 'payment-link-outcomes', causationId: e.id, correlationId: e.stream_id,
        });
      },
    }));
    return () => consumer.stop();
  },
};
