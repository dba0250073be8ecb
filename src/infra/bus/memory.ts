// In-process bus for the embedded mode. Same contract as JetStream: at-least-once delivery to each
// durable consumer, explicit outcome per message, delayed redelivery chosen by the handler,
// dead-lettering after maxDeliver, dedupe of a re-published id. It keeps nothing on disk: the event
// forwarder re-sends from its checkpoint after a restart (see lowestUnsettled).
import {
  DEFAULT_MAX_DELIVER, defaultBackoffMs, subjectMatches,
  type Bus, type BusMessage, type Consumer, type ConsumerOptions,
} from './types.ts';

interface Entry { seq: number; id: string; subject: string; data: unknown }

const DEDUPE_WINDOW = 100_000; // ids remembered per consumer
const MAX_QUEUE = 1_000_000;

class MemoryConsumer implements Consumer {
  private queue: Array<{ entry: Entry; deliveryCount: number }> = [];
  private inFlight = 0;
  private stopped = false;
  private readonly seenIds = new Set<string>();
  readonly unsettled = new Set<number>();
  private timers = new Set<NodeJS.Timeout>();
  private idle: Array<() => void> = [];

  constructor(
    readonly opts: ConsumerOptions,
    private readonly bus: MemoryBus,
  ) {}

  offer(entry: Entry): void {
    if (this.stopped || !this.opts.subjects.some((p) => subjectMatches(p, entry.subject))) return;
    if (this.seenIds.has(entry.id)) return;
    this.seenIds.add(entry.id);
    if (this.seenIds.size > DEDUPE_WINDOW) this.seenIds.delete(this.seenIds.values().next().value as string);
    if (this.queue.length >= MAX_QUEUE) throw new Error(`consumer ${this.opts.durable} queue full`);
    this.unsettled.add(entry.seq);
    this.queue.push({ entry, deliveryCount: 1 });
    this.pump();
  }

  private pump(): void {
    const limit = this.opts.concurrency ?? 1;
    while (!this.stopped && this.inFlight < limit && this.queue.length > 0) {
      const item = this.queue.shift()!;
      this.inFlight++;
      void this.deliver(item.entry, item.deliveryCount).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) for (const f of this.idle.splice(0)) f();
      });
    }
  }

  private async deliver(entry: Entry, deliveryCount: number): Promise<void> {
    const msg: BusMessage = { id: entry.id, subject: entry.subject, data: entry.data, deliveryCount };
    let retryAfterMs: number | undefined;
    try {
      const outcome = await this.opts.handler(msg);
      if (outcome && typeof outcome.retryAfterMs === 'number') retryAfterMs = outcome.retryAfterMs;
    } catch (err) {
      const max = this.opts.maxDeliver ?? DEFAULT_MAX_DELIVER;
      if (deliveryCount >= max) {
        this.bus.deadLetter(this.opts.durable, entry, err);
        this.unsettled.delete(entry.seq);
        return;
      }
      retryAfterMs = (this.opts.backoffMs ?? defaultBackoffMs)(deliveryCount);
    }
    if (retryAfterMs === undefined) {
      this.unsettled.delete(entry.seq);
      return;
    }
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      this.queue.push({ entry, deliveryCount: deliveryCount + 1 });
      this.pump();
    }, retryAfterMs);
    this.timers.add(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.inFlight > 0) await new Promise<void>((r) => this.idle.push(r));
    this.bus.remove(this);
  }
}

export class MemoryBus implements Bus {
  readonly name = 'memory';
  private seq = 0;
  private consumers = new Set<MemoryConsumer>();
  readonly deadLetters: Array<{ durable: string; id: string; subject: string; data: unknown; error: string }> = [];

  async publish(subject: string, id: string, data: unknown): Promise<void> {
    const entry: Entry = { seq: ++this.seq, id, subject, data };
    for (const c of this.consumers) c.offer(entry);
  }

  async consume(opts: ConsumerOptions): Promise<Consumer> {
    const c = new MemoryConsumer(opts, this);
    this.consumers.add(c);
    return c;
  }

  deadLetterSubject(durable: string): string {
    return `dlq.${durable}`;
  }

  deadLetter(durable: string, entry: Entry, err: unknown): void {
    this.deadLetters.push({ durable, id: entry.id, subject: entry.subject, data: entry.data, error: String(err) });
    for (const c of this.consumers) c.offer({ ...entry, seq: ++this.seq, subject: this.deadLetterSubject(durable) });
  }

  remove(c: MemoryConsumer): void {
    this.consumers.delete(c);
  }

  /** True while any consumer still owes an outcome for something published. */
  hasUnsettled(): boolean {
    for (const c of this.consumers) if (c.unsettled.size > 0) return true;
    return false;
  }

  async healthy(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }
}
