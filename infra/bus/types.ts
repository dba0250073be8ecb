// The bus between the event store's forwarder, the API and the workers. Two implementations: the
// in-process one (embedded mode) and NATS JetStream. Both deliver at least once, so every handler is
// idempotent; retry delays are chosen by the handler (nak with delay), never by the bus.

export interface BusMessage<D = unknown> {
  /** Unique id: publishing the same id twice delivers it once (within the bus's dedupe window). */
  id: string;
  subject: string;
  data: D;
  /** 1 on the first delivery. */
  deliveryCount: number;
  /** Set on a message read from a dead-letter subject: which consumer gave up on it, and why. */
  deadLetter?: DeadLetterInfo;
}

export interface DeadLetterInfo {
  /** The durable consumer that exhausted its deliveries. */
  durable: string;
  /** The subject the message was first published to. */
  subject: string;
  /** The last error its handler threw. */
  error: string;
  /** Deliveries made before giving up. */
  deliveryCount: number;
}

/** What a handler answers: nothing (acknowledged) or a redelivery after a delay it chooses. */
export type HandlerOutcome = void | { retryAfterMs: number };

export interface ConsumerOptions {
  /** Durable consumer name: its position survives restarts (prefixed on NATS). */
  durable: string;
  /** Subjects, with `*` (one token) and `>` (the rest) wildcards. */
  subjects: string[];
  handler: (msg: BusMessage) => Promise<HandlerOutcome>;
  /** After this many failed deliveries the message goes to the dead-letter subject. */
  maxDeliver?: number;
  /** Delay before a redelivery when the handler throws, by delivery count. */
  backoffMs?: (deliveryCount: number) => number;
  /** Messages handled at once by this consumer. */
  concurrency?: number;
}

export interface Consumer {
  stop(): Promise<void>;
}

export interface Bus {
  readonly name: string;
  publish(subject: string, id: string, data: unknown): Promise<void>;
  consume(opts: ConsumerOptions): Promise<Consumer>;
  /** Messages that exhausted their deliveries, for operators and tests. */
  deadLetterSubject(durable: string): string;
  healthy(): Promise<boolean>;
  close(): Promise<void>;
  /**
   * For publishers that feed the bus from a source of truth (the event forwarder): a counter that
   * grows each time the bus loses its server. A server may acknowledge a publish and still lose it
   * in a crash (NATS acknowledges before its write reaches disk), so a publisher treats what it
   * published as safe only while the generation is unchanged, and re-sends from its checkpoint
   * when it changes. Absent (the in-process bus): the server is never lost, the counter never moves.
   */
  generation?(): number;
  /**
   * For metrics: per durable consumer, the messages not yet settled (waiting to be delivered, being
   * handled, or waiting for a redelivery), where the bus can tell. The in-process bus counts its own
   * consumers; NATS asks the server about the durables this process consumes.
   */
  consumerLag?(): Promise<ConsumerLag[]>;
  /**
   * Present on a bus whose backlog lives in this process's memory and nowhere else (the in-process
   * bus): a publisher feeding it from a source of truth waits for room, and treats a batch as safe
   * only once every consumer has settled it (a crash loses the rest).
   */
  readonly backlog?: InProcessBacklog;
}

export interface InProcessBacklog {
  /** Waits while a consumer has too many messages queued. */
  room(): Promise<void>;
  /** The sequence number of the last entry published (0: none yet). */
  lastSeq(): number;
  /** The lowest sequence number a consumer still owes an outcome for (undefined: none). */
  lowestUnsettled(): number | undefined;
}

export interface ConsumerLag {
  durable: string;
  pending: number;
}

export const DEFAULT_MAX_DELIVER = 20;

export function defaultBackoffMs(deliveryCount: number): number {
  return Math.min(60_000, 250 * 2 ** Math.min(deliveryCount - 1, 10));
}

/** NATS-style subject matching: `*` one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}
