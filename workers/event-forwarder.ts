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
import type { SeenVersionsReader } from '../infra/eventstore/seen-versions.ts';
import type { InProcessBacklog } from '../infra/bus/types.ts';
import { readCheckpoint, writeCheckpoint } from '../infra/checkpoints.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import type { Worker } from './worker.ts';
import { ForwardedBatches } from './forwarded-batches.ts';
import { PublishedBatches } from './published-batches.ts';

export const FORWARDER = 'forwarder';

/**
 * The lease one forwarder at a time holds (workers/leased.ts; arbitrary, fixed, apart from the
 * event store's and the feed's locks). Every worker process used to forward every event from the
 * shared checkpoint: one more read of the global order and one more publish of each event per
 * process (the bus dropping the duplicates), and after a restart a forwarder far behind the others
 * re-sent what the bus's duplicate window no longer held.
 */
export const FORWARDER_LEASE_KEY = 7_201_410_045;

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

/** One started forwarder: its checkpoint, what it published and has not saved past, its subscription. */
class Forwarding {
  private readonly memory: InProcessBacklog | undefined;
  private forwardedTo: bigint;
  // Batches published but not yet safe (NATS; published-batches.ts).
  private readonly published = new PublishedBatches();
  // In-process bus: batches forwarded and not yet saved past (forwarded-batches.ts).
  private readonly forwardedBatches = new ForwardedBatches();
  private seenGeneration: number;
  /** Grows on each rewind: a batch handler from an older subscription stops publishing. */
  private epoch = 0;
  private stopped = false;
  // A batch waiting for the bus's room gives up when the forwarder stops.
  private signalStop!: () => void;
  private readonly stopping = new Promise<void>((resolve) => (this.signalStop = resolve));
  private saving = Promise.resolve();
  private lastSave = 0;
  private sub: Subscription;
  private rewinding: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly s: Services,
    private readonly only: ReadonlySet<string> | undefined,
    private readonly marginMs: number,
    private readonly intervalMs: number,
    private saved: bigint,
  ) {
    this.memory = s.bus.backlog;
    this.forwardedTo = saved;
    this.seenGeneration = this.generation();
    this.sub = this.subscribe(saved);
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref();
  }

  /** Starts forwarding from the saved checkpoint; returns the stop function. */
  static async start(s: Services, opts: ForwarderOptions): Promise<() => Promise<void>> {
    const only = s.config.busForward === 'all' ? undefined : opts.types?.();
    const saved = await readCheckpoint(s.knex, FORWARDER);
    const forwarding = new Forwarding(s, only, opts.safetyMarginMs ?? PUBLISH_SAFETY_MARGIN_MS, opts.checkIntervalMs ?? 250, saved);
    return () => forwarding.stop();
  }

  private generation(): number {
    return this.s.bus.generation?.() ?? 0;
  }

  private forwarded(e: RecordedEvent): boolean {
    return this.only === undefined || this.only.has(e.type);
  }

  /** The last position now safe to save, taken off the batches not yet saved past. */
  private takeSafe(): bigint | undefined {
    if (this.memory) return this.forwardedBatches.takeSafe(this.memory.lowestUnsettled());
    return this.published.takeSafe(Date.now(), this.generation(), this.marginMs);
  }

  private saveSafe(): Promise<void> {
    this.lastSave = Date.now();
    this.saving = this.saving.then(async () => {
      const target = this.takeSafe();
      if (target !== undefined && target > this.saved) {
        await writeCheckpoint(this.s.knex, FORWARDER, target);
        this.saved = target;
      }
    }).catch((err) => this.s.log.warn({ err }, 'event forwarder could not save its checkpoint'));
    return this.saving;
  }

  private subscribe(after: bigint): Subscription {
    const mine = this.epoch;
    const seen = this.s.merchantVersions.reader(after);
    const sub = this.s.store.subscribe({
      after,
      batchSize: 500,
      handler: (events) => this.forwardBatch(events, mine, seen),
      onError: (err) => {
        if (!(err instanceof Rewound)) this.s.log.error({ err }, 'event forwarder failed; retrying');
      },
    });
    // The reader ends with its subscription: each rewind and each lease taken again makes a new one.
    return { stop: async () => { await sub.stop(); seen.close(); } };
  }

  private async forwardBatch(events: RecordedEvent[], mine: number, seen: SeenVersionsReader): Promise<void> {
    // Before any publish: a consumer of these events may rely on this process having read
    // the global order up to them (webhooks/targets.ts).
    seen.observe(events);
    const startedUnder = this.generation();
    await this.publishInWindows(events.filter((e) => this.forwarded(e)), mine);
    if (mine !== this.epoch) throw new Rewound('rewound');
    const last = events[events.length - 1]!.position;
    this.forwardedTo = last;
    if (this.memory) this.forwardedBatches.add(last, this.memory.lastSeq());
    else this.published.add(last, Date.now(), startedUnder);
    // At most once per check interval (the timer saves too): a write per batch was a
    // checkpoint statement every few milliseconds under load.
    if (Date.now() - this.lastSave >= this.intervalMs) await this.saveSafe();
  }

  private async publishInWindows(publish: RecordedEvent[], mine: number): Promise<void> {
    for (let i = 0; i < publish.length; i += PUBLISH_WINDOW) {
      // The in-process bus holds its backlog in memory: wait while a consumer is far behind
      // (the events wait in the store instead; memory.ts).
      if (this.memory) {
        await Promise.race([this.memory.room(), this.stopping]);
        if (this.stopped) throw new Rewound('stopped'); // not published: re-sent after a restart
      }
      if (mine !== this.epoch) throw new Rewound('rewound');
      await Promise.all(publish.slice(i, i + PUBLISH_WINDOW).map((e) => this.s.bus.publish(subjectOf(e.type), e.id, toMessage(e))));
    }
  }

  private rewind(): Promise<void> {
    this.rewinding ??= (async () => {
      this.epoch++;
      this.published.clear();
      this.forwardedBatches.clear();
      await this.sub.stop();
      if (this.stopped) return;
      this.s.log.warn({ from: this.saved.toString(), forwarded: this.forwardedTo.toString() },
        'bus lost its server: re-sending events from the forwarder checkpoint');
      this.forwardedTo = this.saved;
      this.sub = this.subscribe(this.saved);
    })().finally(() => { this.rewinding = undefined; });
    return this.rewinding;
  }

  /** Each check interval: rewind if the bus lost its server, else save what became safe. */
  private check(): void {
    if (this.stopped || this.rewinding) return;
    const current = this.generation();
    if (current !== this.seenGeneration) {
      this.seenGeneration = current;
      void this.rewind();
    } else {
      void this.saveSafe();
    }
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    this.signalStop();
    clearInterval(this.timer);
    await this.rewinding;
    await this.sub.stop();
    await this.saveSafe();
  }
}

export function makeEventForwarder(opts: ForwarderOptions = {}): Worker {
  return { name: FORWARDER, start: (s: Services) => Forwarding.start(s, opts) };
}
