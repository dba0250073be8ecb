// The shape of every aggregate: pure decide/evolve over a discriminated union of events.
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** What folds a stream: its initial state and how each event moves it. */
export interface Decider<State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Opts a long-lived stream into snapshots (commands/aggregates.ts): a load folds only the events after the latest. */
  snapshot?: SnapshotCodec<State>;
}

/**
 * How a decider's state is stored as a snapshot. `shape` names the encoding: bump it whenever the
 * state's shape (or the meaning of its fields) changes, and snapshots of the old shape are ignored
 * (the stream is folded from its events and snapshotted again). `decode(encode(s))` must equal `s`
 * (bigints as strings: the snapshot is JSON).
 */
export interface SnapshotCodec<State> {
  shape: string;
  /** A new snapshot once a stream is this many events past its latest usable one. */
  every: number;
  encode(state: State): unknown;
  decode(json: unknown): State;
}

/**
 * An aggregate's decider: its commands (a union, each a plain value) decided on its state into the
 * events to append, or a DomainError refusing the command. `decide` ends in an exhaustive check of
 * the command union, as `evolve` does of the event union. Pure: no clock, no I/O (time, ids and any
 * other stream's state a decision needs arrive in the command).
 */
export interface CommandDecider<State, Event extends DomainEvent, Command> extends Decider<State, Event> {
  decide(command: Command, state: State): Event[];
}

export function fold<State, Event extends DomainEvent>(d: Decider<State, Event>, events: Event[], from?: State): State {
  return events.reduce((s, e) => d.evolve(s, e), from ?? d.initialState());
}

/** Exhaustiveness check: a new event type nobody handles fails to compile. */
export function unreachable(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
