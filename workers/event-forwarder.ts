// Forwards the event store's global order to the bus: subject `events.<type>`, message id = event id
// (so a re-sent event is deduplicated by the bus). The event store stays the source of truth: the
// checkpoint is saved only up to what the bus holds safely, and after a restart (or a bus that lost
// messages) forwarding resumes from it; consumers are idempotent, so a re-send is harmless.
//
// What "safely" means depends on the bus:
//  - the in-process bus keeps nothing across a crash: only what every consumer has settled is safe,
//    so the checkpoint moves past a batch once nothing published up to it is left unsettled (under a
//    continuous load something always is, but each message in time settles);
//  - NATS JetStream acknowledges a publish once the message is in the server's memory, before it
//    reaches disk, so a NATS crash can lose the newest acknowledged messages. The checkpoint only
//    moves past a published batch once PUBLISH_SAFETY_MARGIN_MS have passed since its last
//    acknowledgement AND the bus has not lost its server since the batch started (its
//    `generation()` is unchanged). When the generation changes, the forwarder rewinds to its saved
//    checkpoint and re-sends everything after it: JetStream's msgID dedupe drops what the server
//    still has (within its duplicate window), and consumers dedupe the rest by event id.
import type { Services } from '../commands/services.ts';
import type { RecordedEvent, Subscription } from '../infra/eventstore/types.ts';
import { readCheckpoint, writeCheckpoint } from '../infra/checkpoints.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import type { Worker } from './worker.ts';
import { ForwardedBatches } from './forwarded-batches.ts';

export const FORWARDER = 'forwarder';

/**
 * Why 2 s: the NATS file store appends an acknowledged message to an in-memory block buffer and
 * writes it to the file from a background flush loop within milliseconds; once written it is in the
 * operating system's page cache and survives the NATS process dying (kill -9, OOM, crash). Two
 * seconds covers that flush with a wide margin (and a slow disk under load). Anything the server
 * acknowledged but had not written when it died is re-sent, because the server's loss is seen as a
 * connection loss (the generation changes) before the margin has passed: a process crash closes the
 * socket at once. The margin does not cover the machine losing power before NATS's periodic fsync
 * (`sync_interval`, 2 minutes by default): for that, run NATS with `sync_interval: always`, or raise
 * this margin above the sync interval (at the price of re-sending more after a restart).
 */
export const PUBLISH_SAFETY_MARGIN_MS = 2_000;

/** Events published at once (in order, on one connection) within a batch. */
const PUBLISH_WINDOW = 64;


export function toMessage(e: RecordedEvent): ForwardedEvent {
  return {
    id: e.id, stream_id: e.streamId, version: e.version, position: e.position.toString(), type: e.type,
    data: e.data, metadata: e.metadata, created_at: e.createdAt.toISOString(),
  };
}

export interface ForwarderOptions {
  /** See PUBLISH_SAFETY_MARGIN_MS. */
  safetyMarginMs?: number;
  /** How often the forwarder checks the bus's generation and saves its checkpoint. */
  checkIntervalMs?: number;
  /**
   * The event types the service's workers consume: with BUS_FORWARD=consumed (the default) only
   * those are published, the rest skipped (a payin's quote, wallet and intermediate events went to
   * NATS and were acknowledged for no reader: most of the bus traffic). Unset: every event.
   */
  types?: () => ReadonlySet<string>;
}

class Rewound extends Error {}

export function makeEventForwarder(opts: ForwarderOptions = {}): Worker {
  const margin = opts.safetyMarginMs ?? PUBLISH_SAFETY_MARGIN_MS;
  const interval = opts.checkIntervalMs ?? 250;
  return {
    name: FORWARDER,
    async start(s: Services) {
      const memory = s.bus.backlog;
      const only = s.config.busForward === 'all' ? undefined : opts.types?.();
      const forwarded = (e: RecordedEvent) => only === undefined || only.has(e.type);
      const generation = () => s.bus.generation?.() ?? 0;
      let saved = await readCheckpoint(s.knex, FORWARDER);
      let forwardedTo = saved;
      // Batches published but not yet safe: the last position of each, when its last publish was
      // acknowledged, and the bus generation read before its first publish.
      let published: Array<{ position: bigint; at: number; generation: number }> = [];
      // In-process bus: batches forwarded and not yet saved past (forwarded-batches.ts).
      const forwardedBatches = new ForwardedBatches();
      let seenGeneration = generation();
      let epoch = 0;
      let stopped = false;
      // A batch waiting for the bus's room gives up when the forwarder stops.
      let stop!: () => void;
      const stopping = new Promise<void>((resolve) => (stop = resolve));

      let saving = Promise.resolve();
      let lastSave = 0;
      const saveSafe = (): Promise<void> => {
        lastSave = Date.now();
        saving = saving.then(async () => {
          let target: bigint | undefined;
          if (memory) {
            target = forwardedBatches.takeSafe(memory.lowestUnsettled());
          } else {
            const now = Date.now();
            const current = generation();
            while (published.length > 0 && published[0]!.generation === current && now - published[0]!.at >= margin) {
              target = published.shift()!.position;
            }
          }
          if (target !== undefined && target > saved) {
            await writeCheckpoint(s.knex, FORWARDER, target);
            saved = target;
          }
        }).catch((err) => s.log.warn({ err }, 'event forwarder could not save its checkpoint'));
        return saving;
      };

      const subscribe = (after: bigint): Subscription => {
        const mine = epoch;
        const seen = s.merchantVersions.reader(after);
        return s.store.subscribe({
          after,
          batchSize: 500,
          handler: async (events) => {
            // Before any publish: a consumer of these events may rely on this process having read
            // the global order up to them (webhooks/targets.ts).
            seen.observe(events);
            const startedUnder = generation();
            const publish = events.filter(forwarded);
            for (let i = 0; i < publish.length; i += PUBLISH_WINDOW) {
              // The in-process bus holds its backlog in memory: wait while a consumer is far behind
              // (the events wait in the store instead; memory.ts).
              if (memory) {
                await Promise.race([memory.room(), stopping]);
                if (stopped) throw new Rewound('stopped'); // not published: re-sent after a restart
              }
              if (mine !== epoch) throw new Rewound('rewound');
              await Promise.all(publish.slice(i, i + PUBLISH_WINDOW).map((e) => s.bus.publish(subjectOf(e.type), e.id, toMessage(e))));
            }
            if (mine !== epoch) throw new Rewound('rewound');
            const last = events[events.length - 1]!.position;
            forwardedTo = last;
            if (memory) forwardedBatches.add(last, memory.lastSeq());
            else published.push({ position: last, at: Date.now(), generation: startedUnder });
            // At most once per check interval (the timer saves too): a write per batch was a
            // checkpoint statement every few milliseconds under load.
            if (Date.now() - lastSave >= interval) await saveSafe();
          },
          onError: (err) => {
            if (!(err instanceof Rewound)) s.log.error({ err }, 'event forwarder failed; retrying');
          },
        });
      };

      let sub = subscribe(saved);
      let rewinding: Promise<void> | undefined;
      const rewind = (): Promise<void> => {
        rewinding ??= (async () => {
          epoch++;
          published = [];
          forwardedBatches.clear();
          await sub.stop();
          if (stopped) return;
          s.log.warn({ from: saved.toString(), forwarded: forwardedTo.toString() },
            'bus lost its server: re-sending events from the forwarder checkpoint');
          forwardedTo = saved;
          sub = subscribe(saved);
        })().finally(() => { rewinding = undefined; });
        return rewinding;
      };

      const timer = setInterval(() => {
        if (stopped || rewinding) return;
        const current = generation();
        if (current !== seenGeneration) {
          seenGeneration = current;
          void rewind();
        } else {
          void saveSafe();
        }
      }, interval);
      timer.unref();

      return async () => {
        stopped = true;
        stop();
        clearInterval(timer);
        await rewinding;
        await sub.stop();
        await saveSafe();
      };
    },
  };
}

export const eventForwarder: Worker = makeEventForwarder();
