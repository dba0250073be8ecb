// The newest version of each watched stream that this process's readers of the global order have
// seen, and up to which position that is complete. A cached aggregate at least that new includes
// every event of its stream up to that position, whichever process appended them: a reader that
// needs a stream only "as of" a committed event (the webhook recorder and the merchant's URL) can
// skip the read of the stream's tail.
//
// Why that holds. A reader of the global order (the projector, the event forwarder) gets it with no
// gaps (appends commit in position order), so it observes every watched event after its starting
// checkpoint up to where it has read: an interval (from, to]. The baseline, set once at start before
// anything is cached, is the store's head then: every event at or below it was committed before any
// state this process caches was read. The position is as far as the baseline and the readers'
// intervals cover without a gap (a reader that started past the covered part counts only once the
// others have caught up with its start: after a restart, the events below its checkpoint may be
// newer than a state cached meanwhile).
import type { RecordedEvent } from './types.ts';

/**
 * Streams whose versions are kept (the least recently moved go first). A stream no longer kept
 * answers "unknown" (Infinity): the caller reads the stream instead of trusting a cache, which
 * costs a read and never correctness. Merchant streams are watched, so this is about the number of
 * merchants active since the process started.
 */
export const SEEN_STREAMS_KEPT = 100_000;

export interface SeenVersionsReader {
  /** A batch, in order, right after what this reader observed before (or its start). */
  observe(events: RecordedEvent[]): void;
  /**
   * The reader stopped (a forwarder rewound, or let its lease go): its interval is dropped, so that
   * readers do not pile up over a process's life. What it covered stays covered (the position
   * never goes back); an interval still ahead of a gap is only a shortcut lost (a read instead).
   */
  close(): void;
}

export class SeenVersions {
  private readonly versions = new Map<string, number>();
  private readonly readers: Array<{ from: bigint; to: bigint }> = [];
  private baseline: bigint | undefined;
  private covered = 0n;

  /** Set once a stream was dropped: from then on an unknown stream may be one dropped. */
  private dropped = false;

  constructor(
    private readonly watches: (streamId: string) => boolean,
    private readonly kept = SEEN_STREAMS_KEPT,
  ) {}

  /** Once, before anything is cached: the store's head (every event up to it is in any later read). */
  setBaseline(head: bigint): void {
    if (this.baseline !== undefined) throw new Error('SeenVersions: the baseline is set once');
    this.baseline = head;
    this.recompute();
  }

  /** Readers not closed (for tests). */
  get readerCount(): number {
    return this.readers.length;
  }

  /** A reader of the global order that starts after `from` (its checkpoint). */
  reader(from: bigint): SeenVersionsReader {
    const r = { from, to: from };
    this.readers.push(r);
    return {
      observe: (events) => {
        for (const e of events) {
          if (!this.watches(e.streamId)) continue;
          const known = this.versions.get(e.streamId) ?? 0;
          if (e.version <= known) continue;
          this.versions.delete(e.streamId); // re-inserted last: the least recently moved go first
          this.versions.set(e.streamId, e.version);
        }
        this.dropOldest();
        const last = events[events.length - 1]?.position;
        if (last !== undefined && last > r.to) r.to = last;
        this.recompute();
      },
      close: () => {
        const i = this.readers.indexOf(r);
        if (i >= 0) this.readers.splice(i, 1);
      },
    };
  }

  /** Every watched event at or below this position is observed here or in any state cached since the start. */
  get position(): bigint {
    return this.covered;
  }

  /**
   * The newest version of the stream observed (0: none since this process started; Infinity: not
   * known any more, see SEEN_STREAMS_KEPT).
   */
  latest(streamId: string): number {
    return this.versions.get(streamId) ?? (this.dropped ? Number.POSITIVE_INFINITY : 0);
  }

  private dropOldest(): void {
    while (this.versions.size > this.kept) {
      this.versions.delete(this.versions.keys().next().value as string);
      this.dropped = true;
    }
  }

  private recompute(): void {
    if (this.baseline === undefined) return; // nothing is known to be covered yet
    let p = this.covered > this.baseline ? this.covered : this.baseline;
    for (let moved = true; moved;) {
      moved = false;
      for (const r of this.readers) {
        if (r.from <= p && r.to > p) {
          p = r.to;
          moved = true;
        }
      }
    }
    this.covered = p;
  }
}
