// In-process bus for the embedded mode. Same contract as JetStream: at-least-once delivery to each
// durable consumer, explicit outcome per message, delayed redelivery chosen by the handler,
// dead-lettering after maxDeliver, dedupe of a re-published id. It keeps nothing on disk: the event
// forwarder re-sends from its checkpoint after a restart (see lowestUnsettled).
//
// A durable lives in this process only: several consume() calls with the same durable name share
// its work (each message goes to one of them, the least busy), like instances of one JetStream
// durable consumer; a separate process has its own bus. Messages published while no consumer of a
// durable runs are not kept for it (JetStream keeps them): in the embedded mode consumers run for
// the process's lifetime and the forwarder re-sends what was not settled when it restarts.
//
// Bounded: the bus holds its messages in the process's memory, where JetStream keeps a backlog on
// disk. A publisher that can wait (the event forwarder) calls room() first, and waits while a
// consumer has more than ROOM_HIGH messages queued; what it has not published stays in the event
// store. Under a steady embedded payin load the provider gateway fell behind the API, and its
// queue held tens of thousands of events (the service grew past 1 GB in three minutes). A consumer
// far behind holds back what the others get, as one bounded queue does; the service's consumers do
// short database work and leave slow calls (operators, webhook endpoints, KYC files) to the
// scheduler, so a queue fills only when the database is what is behind.
import {
  DEFAULT_MAX_DELIVER, defaultBackoffMs, subjectMatches,
  type Bus, type BusMessage, type Consumer, type ConsumerLag, type ConsumerOptions, type DeadLetterInfo, type InProcessBacklog,
} from './types.ts';

interface Entry { seq: number; id: string; subject: string; data: unknown; deadLetter?: DeadLetterInfo }
interface Pending { entry: Entry; deliveryCount: number }

const DEDUPE_WINDOW = 100_000; // ids remembered by the bus
const MAX_QUEUE = 1_000_000;
/** room() waits while a consumer has more messages queued than this, until it is down to ROOM_LOW. */
export const ROOM_HIGH = 1_000;
const ROOM_LOW = ROOM_HIGH / 2;

class MemoryConsumer implements Consumer {
  private queue: Pending[] = [];
  private inFlight = 0;
  private stopped = false;
  readonly unsettled = new Set<number>();
  /** Redeliveries waiting for their delay, with when they are due (handed to a sibling on stop). */
  private timers = new Map<NodeJS.Timeout, { item: Pending; dueAt: number }>();
  private idle: Array<() => void> = [];

  constructor(
    readonly opts: ConsumerOptions,
    private readonly bus: MemoryBus,
  ) {}

  matches(subject: string): boolean {
    return !this.stopped && this.opts.subjects.some((p) => subjectMatches(p, subject));
  }

  /** Messages waiting for a free slot (not those in hand or waiting for a redelivery's delay). */
  queued(): number {
    return this.queue.length;
  }

  /** Messages this consumer holds: handling, queued or waiting for a redelivery. */
  load(): number {
    return this.inFlight + this.queue.length + this.timers.size;
  }

  offer(entry: Entry): void {
    if (this.queue.length >= MAX_QUEUE) throw new Error(`consumer ${this.opts.durable} queue full`);
    this.unsettled.add(entry.seq);
    this.queue.push({ entry, deliveryCount: 1 });
    this.pump();
  }

  /** Takes over a stopped sibling's message (same durable), keeping its delivery count and delay. */
  adopt(item: Pending, dueAt: number): void {
    this.unsettled.add(item.entry.seq);
    const delay = dueAt - Date.now();
    if (delay > 0) this.later(item, delay);
    else {
      this.queue.push(item);
      this.pump();
    }
  }

  private later(item: Pending, delay: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      this.queue.push(item);
      this.pump();
    }, delay);
    this.timers.set(timer, { item, dueAt: Date.now() + delay });
  }

  private pump(): void {
    const limit = this.opts.concurrency ?? 1;
    while (!this.stopped && this.inFlight < limit && this.queue.length > 0) {
      const item = this.queue.shift()!;
      this.bus.drained();
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
    if (entry.deadLetter) msg.deadLetter = entry.deadLetter;
    let retryAfterMs: number | undefined;
    try {
      const outcome = await this.opts.handler(msg);
      if (outcome && typeof outcome.retryAfterMs === 'number') retryAfterMs = outcome.retryAfterMs;
    } catch (err) {
      const max = this.opts.maxDeliver ?? DEFAULT_MAX_DELIVER;
      if (deliveryCount >= max) {
        this.bus.deadLetter(this.opts.durable, entry, err, deliveryCount);
        this.unsettled.delete(entry.seq);
        return;
      }
      retryAfterMs = (this.opts.backoffMs ?? defaultBackoffMs)(deliveryCount);
    }
    if (retryAfterMs === undefined) {
      this.unsettled.delete(entry.seq);
      return;
    }
    const item = { entry, deliveryCount: deliveryCount + 1 };
    if (this.stopped) {
      this.bus.handOver(this, item, Date.now() + retryAfterMs);
      return;
    }
    this.later(item, retryAfterMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // What this instance still holds goes to another instance of the same durable, if one runs.
    for (const [t, { item, dueAt }] of this.timers) {
      clearTimeout(t);
      this.bus.handOver(this, item, dueAt);
    }
    this.timers.clear();
    for (const item of this.queue.splice(0)) this.bus.handOver(this, item, 0);
    this.bus.drained();
    if (this.inFlight > 0) await new Promise<void>((r) => this.idle.push(r));
    this.bus.remove(this);
  }
}

export class MemoryBus implements Bus {
  /** Its backlog is its own memory: the forwarder waits for room and saves only what was settled. */
  get backlog(): InProcessBacklog {
    return this;
  }

  readonly name = 'memory';
  private seq = 0;
  private consumers = new Set<MemoryConsumer>();
  private readonly seenIds = new Set<string>();
  private waitingForRoom: Array<() => void> = [];
  readonly deadLetters: Array<{ durable: string; id: string; subject: string; data: unknown; error: string }> = [];

  async publish(subject: string, id: string, data: unknown): Promise<void> {
    if (this.seenIds.has(id)) return;
    this.seenIds.add(id);
    if (this.seenIds.size > DEDUPE_WINDOW) this.seenIds.delete(this.seenIds.values().next().value as string);
    this.dispatch({ seq: ++this.seq, id, subject, data });
  }

  /**
   * Resolves once no consumer has more than ROOM_HIGH messages queued (then lets publishers on when
   * the fullest is down to ROOM_LOW). A publisher that calls it before each publish bounds what the
   * bus holds; publish() itself never waits.
   */
  async room(): Promise<void> {
    while (this.fullest() > ROOM_HIGH) await new Promise<void>((resolve) => this.waitingForRoom.push(resolve));
  }

  /** The longest consumer queue. */
  fullest(): number {
    let most = 0;
    for (const c of this.consumers) most = Math.max(most, c.queued());
    return most;
  }

  /** A consumer's queue shrank (or it stopped): wakes the publishers waiting for room, if there is. */
  drained(): void {
    if (this.waitingForRoom.length > 0 && this.fullest() <= ROOM_LOW) for (const f of this.waitingForRoom.splice(0)) f();
  }

  /** One consumer per durable gets the entry: the least busy of those running. */
  private dispatch(entry: Entry): void {
    const chosen = new Map<string, MemoryConsumer>();
    for (const c of this.consumers) {
      if (!c.matches(entry.subject)) continue;
      const current = chosen.get(c.opts.durable);
      if (!current || c.load() < current.load()) chosen.set(c.opts.durable, c);
    }
    for (const c of chosen.values()) c.offer(entry);
  }

  handOver(from: MemoryConsumer, item: Pending, dueAt: number): void {
    from.unsettled.delete(item.entry.seq);
    let to: MemoryConsumer | undefined;
    for (const c of this.consumers) {
      if (c !== from && c.opts.durable === from.opts.durable && c.matches(item.entry.subject) && (!to || c.load() < to.load())) to = c;
    }
    to?.adopt(item, dueAt);
  }

  async consume(opts: ConsumerOptions): Promise<Consumer> {
    const c = new MemoryConsumer(opts, this);
    this.consumers.add(c);
    return c;
  }

  deadLetterSubject(durable: string): string {
    return `dlq.${durable}`;
  }

  deadLetter(durable: string, entry: Entry, err: unknown, deliveryCount: number): void {
    const error = String(err);
    this.deadLetters.push({ durable, id: entry.id, subject: entry.subject, data: entry.data, error });
    this.dispatch({
      seq: ++this.seq, id: entry.id, subject: this.deadLetterSubject(durable), data: entry.data,
      deadLetter: { durable, subject: entry.subject, error, deliveryCount },
    });
  }

  remove(c: MemoryConsumer): void {
    this.consumers.delete(c);
    this.drained();
  }

  /** True while any consumer still owes an outcome for something published. */
  hasUnsettled(): boolean {
    return this.lowestUnsettled() !== undefined;
  }

  /** The sequence number of the last entry published (0: none yet). */
  lastSeq(): number {
    return this.seq;
  }

  /**
   * The lowest sequence number a consumer still owes an outcome for (undefined: none): everything
   * published before it is settled, so a crash now would lose nothing before it. A scan of what the
   * consumers hold, which room() keeps to about a thousand each.
   */
  lowestUnsettled(): number | undefined {
    let low: number | undefined;
    for (const c of this.consumers) for (const seq of c.unsettled) if (low === undefined || seq < low) low = seq;
    return low;
  }

  async consumerLag(): Promise<ConsumerLag[]> {
    const byDurable = new Map<string, number>();
    for (const c of this.consumers) byDurable.set(c.opts.durable, (byDurable.get(c.opts.durable) ?? 0) + c.load());
    return [...byDurable].map(([durable, pending]) => ({ durable, pending }));
  }

  async healthy(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }
}
