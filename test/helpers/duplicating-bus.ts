// A test-only Bus around a real one (memory or NATS) that makes at-least-once delivery as hostile as
// the contract allows: every message reaches each consumer's handler two or three times (one copy
// racing the original, one arriving later, after other messages), and first deliveries are held in
// a small window and released in shuffled order. The handler's own concurrency is kept (the
// reordering happens in the window, not by running more handlers at once).
import type { Bus, BusMessage, Consumer, ConsumerLag, ConsumerOptions, HandlerOutcome } from '../../infra/bus/types.ts';

export interface DuplicationStats {
  /** Handler calls for original deliveries (what the real bus handed over). */
  delivered: number;
  /** Extra handler calls injected by this wrapper. */
  duplicates: number;
  /** Windows released in an order other than arrival. */
  reordered: number;
  /** Injected copies whose handler threw (the original's outcome is what the bus sees). */
  duplicateErrors: number;
}

/** mulberry32: a small seeded generator, so a failing run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const WINDOW = 4;
const WINDOW_WAIT_MS = 15;
const LATE_COPY_MAX_MS = 250;

/** Runs at most `limit` tasks at once. */
function limiter(limit: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((r) => waiting.push(r));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export class DuplicatingBus implements Bus {
  readonly name: string;
  readonly stats: DuplicationStats = { delivered: 0, duplicates: 0, reordered: 0, duplicateErrors: 0 };
  private readonly random: () => number;
  private readonly pendingCopies = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    readonly inner: Bus,
    readonly seed: number,
  ) {
    this.name = `duplicating(${inner.name})`;
    this.random = seededRandom(seed);
  }

  publish(subject: string, id: string, data: unknown): Promise<void> {
    return this.inner.publish(subject, id, data);
  }

  async consume(opts: ConsumerOptions): Promise<Consumer> {
    const limit = opts.concurrency ?? 1;
    const run = limiter(limit);
    let window: Array<{ msg: BusMessage; release: () => void }> = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      const batch = window;
      window = [];
      const order = this.shuffle(batch.map((_, i) => i));
      if (order.some((v, i) => v !== i)) this.stats.reordered++;
      for (const i of order) batch[i]!.release();
    };
    const copy = (msg: BusMessage, n: number, delayMs: number) => {
      this.stats.duplicates++;
      const p = new Promise((r) => setTimeout(r, delayMs))
        .then(() => (this.closed ? undefined : run(() => opts.handler({ ...msg, deliveryCount: msg.deliveryCount + n }))))
        .catch(() => { this.stats.duplicateErrors++; });
      this.pendingCopies.add(p);
      void p.finally(() => this.pendingCopies.delete(p));
    };
    const handler = async (msg: BusMessage): Promise<HandlerOutcome> => {
      this.stats.delivered++;
      if (msg.deliveryCount === 1) {
        // Held until the window is full or has waited long enough, then released shuffled.
        await new Promise<void>((release) => {
          window.push({ msg, release });
          if (window.length >= WINDOW) flush();
          else timer ??= setTimeout(flush, WINDOW_WAIT_MS);
        });
        // A copy racing the original, and (one time in two) a late one after later messages.
        copy(msg, 1, 0);
        if (this.random() < 0.5) copy(msg, 2, Math.floor(this.random() * LATE_COPY_MAX_MS));
      }
      return run(() => opts.handler(msg));
    };
    // The inner consumer may hand over a window's worth more than the handler runs at once.
    return this.inner.consume({ ...opts, concurrency: limit + WINDOW, handler });
  }

  private shuffle(xs: number[]): number[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }

  /** Waits for every injected copy to have run (before the test checks its effects). */
  async drain(): Promise<void> {
    while (this.pendingCopies.size > 0) await Promise.all([...this.pendingCopies]);
  }

  deadLetterSubject(durable: string): string {
    return this.inner.deadLetterSubject(durable);
  }

  healthy(): Promise<boolean> {
    return this.inner.healthy();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.inner.close();
  }

  generation(): number {
    return this.inner.generation?.() ?? 0;
  }

  async consumerLag(): Promise<ConsumerLag[]> {
    return (await this.inner.consumerLag?.()) ?? [];
  }
}
