// The newest version of each watched stream that this process's readers of the global order have
// seen, and how far they have read. A cached aggregate at least that new includes every event of its
// stream up to that position, whichever process appended them: a reader that needs a stream only
// "as of" a committed event (the webhook recorder and the merchant's URL) can skip the read of the
// stream's tail.
//
// Why that holds: a reader of the global order (the event forwarder, the projector) gets it with no
// gaps (appends commit in position order), so once one has passed position P, every watched event at
// or before P went through `observe`. Events before a reader's starting checkpoint were committed
// before this process started, and any state this process caches was read after that.
import type { RecordedEvent } from './types.ts';

export class SeenVersions {
  private readonly versions = new Map<string, number>();
  private through = 0n;

  constructor(private readonly watches: (streamId: string) => boolean) {}

  /** A batch from a reader of the global order, in order, with nothing before it left unread. */
  observe(events: RecordedEvent[]): void {
    for (const e of events) {
      if (!this.watches(e.streamId)) continue;
      if (e.version > (this.versions.get(e.streamId) ?? 0)) this.versions.set(e.streamId, e.version);
    }
    const last = events[events.length - 1]?.position;
    if (last !== undefined && last > this.through) this.through = last;
  }

  /** Every watched event at or before this position has been observed. */
  get position(): bigint {
    return this.through;
  }

  /** The newest version of the stream observed (0: none since this process started). */
  latest(streamId: string): number {
    return this.versions.get(streamId) ?? 0;
  }
}
