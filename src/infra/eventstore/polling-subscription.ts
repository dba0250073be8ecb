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
  const loop = (async () => {
    while (!stopped) {
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
        continue;
      }
      if (batch.length === batchSize) continue;
      // A commit we were told about is not readable yet (an older transaction still holds
      // pg_snapshot_xmin back): look again soon rather than at the next poll.
      await wakeup.wait(wakeup.knownHead > checkpoint ? 5 : pollMs);
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
