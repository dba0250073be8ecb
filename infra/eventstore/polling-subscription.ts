// A catch-up-then-live subscription built on readAll: read batches until nothing is left, then
// sleep until woken (a local append, a NOTIFY from another process) or the poll interval passes.
import type { RecordedEvent, SubscribeOptions, Subscription } from './types.ts';

export class Wakeup {
  private waiters: Array<() => void> = [];
  /** Highest position this process knows to be committed (a hint: the reader may lag it briefly). */
  knownHead = 0n;

  signal(position?: bigint): void {
    if (position !== undefined && position > this.knownHead) this.knownHead = position;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.waiters = self.waiters.filter((w) => w !== done);
        resolve();
      }
      this.waiters.push(done);
    });
  }
}

export function pollingSubscription(
  readAll: (after: bigint, limit: number) => Promise<RecordedEvent[]>,
  wakeup: Wakeup,
  opts: SubscribeOptions & { pollMs?: number },
): Subscription {
  let stopped = false;
  const batchSize = opts.batchSize ?? 500;
  const pollMs = opts.pollMs ?? 500;
  let checkpoint = opts.after;
  let lastRead = Number.NEGATIVE_INFINITY;
  let more = true; // the last read was a full batch (catching up): read on at once
  const loop = (async () => {
    while (!stopped) {
      // Nothing known past the checkpoint (e.g. the NOTIFY echo of an append of ours, already
      // delivered): no read until a signal says more, or until the poll interval, which covers
      // other processes' commits whose notification was lost.
      const quietFor = Date.now() - lastRead;
      if (!more && wakeup.knownHead <= checkpoint && quietFor < pollMs) {
        await wakeup.wait(pollMs - quietFor);
        continue;
      }
      lastRead = Date.now();
      let batch: RecordedEvent[];
      try {
        batch = await readAll(checkpoint, batchSize);
        if (batch.length > 0 && !stopped) {
          await opts.handler(batch);
          checkpoint = batch[batch.length - 1]!.position;
        }
      } catch (err) {
        if (stopped) break;
        opts.onError?.(err);
        await wakeup.wait(1000);
        more = true; // try again whatever the wake-up hints say
        continue;
      }
      more = batch.length === batchSize;
      if (more) continue;
      // A commit we were told about is not readable yet: look again soon rather than at the next poll.
      if (wakeup.knownHead > checkpoint) await wakeup.wait(5);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wakeup.signal();
      await loop;
    },
  };
}
