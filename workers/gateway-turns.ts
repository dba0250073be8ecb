// The provider gateway's turns: how many leg starts do their own work (reads, writes, the sandbox's
// answer from our database) at once in a process. A start waiting for a real provider's HTTP answer
// gives its turn up and queues for one again with the answer, so a provider's latency holds none of
// them: more starts can wait at a provider (the bus hands the gateway more triggers than turns),
// and the answers that come back together share the statements that record them (each statement
// batched, infra/statement-batcher.ts) as the sandbox's starts do.
export class GatewayTurns {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Resolves when this caller holds a turn (first come, first served). */
  async take(): Promise<void> {
    if (this.free > 0 && this.waiting.length === 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next(); // the turn passes on as it is
    else this.free++;
  }

  /** Runs `work` holding a turn. */
  async within<T>(work: () => Promise<T>): Promise<T> {
    await this.take();
    try {
      return await work();
    } finally {
      this.give();
    }
  }

  /** Inside `within`: runs `wait` (a call to a provider) without the turn, and takes one again after. */
  async outside<T>(wait: () => Promise<T>): Promise<T> {
    this.give();
    try {
      return await wait();
    } finally {
      await this.take();
    }
  }
}
