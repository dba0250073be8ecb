// The transfer saga's one step that is not a leg outcome: a created transfer starts its collection.
// A create decides that itself since issue 44 (domain/transfer.ts), so here it decides nothing;
// the step stays for transfers created by an earlier version (transfer.created alone, during a
// rolling deploy or recorded before it), whose collection would otherwise never start. Everything
// after is driven by the legs' outcomes (commands/transfer-legs.ts, called by the provider gateway),
// so the saga's state is the transfer stream itself: after a crash, redelivered events decide
// nothing twice and nothing is kept in memory.
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import { startCollection } from '../commands/transfers.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import { neverGiveUp } from './never-give-up.ts';

export const transferSaga: Worker = {
  name: 'transfer-saga',
  consumes: () => ['transfer.created'],
  async start(s: Services) {
    const consumer = await s.bus.consume(neverGiveUp(s.log, {
      durable: 'transfer-saga',
      subjects: transferSaga.consumes!().map(subjectOf),
      concurrency: 16,
      handler: async (msg) => {
        const e = msg.data as ForwardedEvent;
        await startCollection(s, e.stream_id.slice('transfer-'.length), { actor: 'transfer-saga', causationId: e.id, correlationId: e.stream_id });
      },
    }));
    return () => consumer.stop();
  },
};
