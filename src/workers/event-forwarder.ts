// Forwards the event store's global order to the bus: subject `events.<type>`, message id = event id
// (so a re-sent event is deduplicated by the bus). The event store stays the source of truth: the
// checkpoint is saved only up to what the bus holds safely, and after a restart (or a bus that lost
// messages) forwarding resumes from it; consumers are idempotent, so a re-send is harmless.
import type { Services } from '../services.ts';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import { readCheckpoint, writeCheckpoint } from '../projections/projector.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import type { Worker } from '../registry.ts';

export const FORWARDER = 'forwarder';

export interface ForwardedEvent {
  id: string;
  stream_id: string;
  version: number;
  position: string;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created_at: string;
}

export const subjectOf = (type: string) => `events.${type}`;

export function toMessage(e: RecordedEvent): ForwardedEvent {
  return {
    id: e.id, stream_id: e.streamId, version: e.version, position: e.position.toString(), type: e.type,
    data: e.data, metadata: e.metadata, created_at: e.createdAt.toISOString(),
  };
}

export const eventForwarder: Worker = {
  name: FORWARDER,
  async start(s: Services) {
    const after = await readCheckpoint(s.knex, FORWARDER);
    let forwarded = after;
    let saved = after;
    const sub = s.store.subscribe({
      after,
      batchSize: 500,
      handler: async (events) => {
        for (const e of events) await s.bus.publish(subjectOf(e.type), e.id, toMessage(e));
        forwarded = events[events.length - 1]!.position;
        // The in-process bus keeps nothing across a crash: only what every consumer has settled is
        // safe to skip on restart.
        const safe = !(s.bus instanceof MemoryBus) || !s.bus.hasUnsettled();
        if (safe && forwarded > saved) {
          await writeCheckpoint(s.knex, FORWARDER, forwarded);
          saved = forwarded;
        }
      },
      onError: (err) => s.log.error({ err }, 'event forwarder failed; retrying'),
    });
    // Save the checkpoint once consumers have settled what was forwarded.
    const timer = setInterval(() => {
      const safe = !(s.bus instanceof MemoryBus) || !s.bus.hasUnsettled();
      if (safe && forwarded > saved) {
        const p = forwarded;
        writeCheckpoint(s.knex, FORWARDER, p).then(() => { saved = p; }, () => undefined);
      }
    }, 1000);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await sub.stop();
    };
  },
};
