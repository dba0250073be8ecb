// The event store: the only source of truth. Two adapters implement it (PostgreSQL and
// KurrentDB); one contract test suite (test/eventstore.contract.ts) runs against each.

export interface EventMetadata {
  /** The HTTP request (or worker job) that caused this event. */
  requestId?: string;
  /** The event this one reacts to, when a worker or saga appended it. */
  causationId?: string;
  correlationId?: string;
  [key: string]: unknown;
}

export interface NewEvent<T extends string = string, D = Record<string, unknown>> {
  type: T;
  data: D;
  /** Optional fixed id (uuid); generated otherwise. */
  id?: string;
  metadata?: EventMetadata;
}

export interface RecordedEvent<T extends string = string, D = Record<string, unknown>> {
  id: string;
  streamId: string;
  /** 1-based position inside its stream. */
  version: number;
  /** Position in the global order; opaque except for its order. */
  position: bigint;
  type: T;
  data: D;
  metadata: EventMetadata;
  createdAt: Date;
}

/** The stream's current version (its number of events); 0 = the stream must not exist; 'any' = no check. */
export type ExpectedVersion = number | 'any';

export interface StreamAppend {
  streamId: string;
  expectedVersion: ExpectedVersion;
  events: NewEvent[];
}

/**
 * A stream a decision read but does not write: the append commits only if it is still at `version`
 * (the decision's reading is then the stream as of the commit), else fails with WrongExpectedVersion
 * naming it. Nothing is written to it.
 */
export interface UnchangedStream {
  streamId: string;
  version: number;
}

export interface AppendOptions {
  unchanged?: UnchangedStream[];
}

export interface AppendResult {
  /** Global position of the last event written (the one to wait for, for read-your-writes). */
  position: bigint;
  /** New version of each stream written, by stream id. */
  versions: Record<string, number>;
  events: RecordedEvent[];
}

export class WrongExpectedVersion extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected version ${String(expected)}, actual ${actual}`);
    this.name = 'WrongExpectedVersion';
  }
}

export interface Subscription {
  /** Resolves when the subscription has stopped. */
  stop(): Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position (0n = from the start). */
  after: bigint;
  batchSize?: number;
  /** Called with each batch, in global order; the subscription waits for it. */
  handler: (events: RecordedEvent[]) => Promise<void>;
  onError?: (err: unknown) => void;
}

export interface ReadAllOptions {
  /**
   * false: the events' metadata may be left out (each event's is then `{}`). For readers that never
   * look at it, such as a projection's replay: a fifth of what an event's row costs to read.
   */
  metadata?: boolean;
}

/**
 * A stream's state folded up to `version`, stored beside the events so a load reads only the events
 * after it. Derived data: `shape` names the state's encoding (a decider that changes its state's
 * shape bumps it, and snapshots of another shape are ignored), and the audit checks each against
 * the fold of its events (projections/finance-audit.ts).
 */
export interface Snapshot {
  version: number;
  shape: string;
  /** The state as JSON (the decider's `snapshot.encode`). */
  state: unknown;
}

export interface EventStore {
  readonly name: string;
  /**
   * Appends to one or more streams atomically: every stream's expected version holds and all
   * events are written, or nothing is (WrongExpectedVersion names the first stream that failed).
   * `unchanged`: streams that must still be at a version for the append to commit (UnchangedStream).
   */
  append(appends: StreamAppend[], opts?: AppendOptions): Promise<AppendResult>;
  /** A stream's events from `fromVersion` (1-based, inclusive) on, up to `toVersion` (inclusive) if given, in order. */
  readStream(streamId: string, fromVersion?: number, toVersion?: number): Promise<RecordedEvent[]>;
  /** Events after `after` in the global order, never skipping one that commits late. */
  readAll(after: bigint, limit: number, opts?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** The stream's latest snapshot, if any. */
  readSnapshot(streamId: string): Promise<Snapshot | undefined>;
  /**
   * Stores a snapshot unless the stream already has one at this version or newer (a snapshot never
   * moves backwards). Callers treat it as best effort: the events stay the truth.
   */
  writeSnapshot(streamId: string, snapshot: Snapshot): Promise<void>;
  /** Catch-up then live subscription to the global order. */
  subscribe(opts: SubscribeOptions): Subscription;
  /** The position of the newest event readable now. */
  head(): Promise<bigint>;
  healthy(): Promise<boolean>;
  close(): Promise<void>;
}
