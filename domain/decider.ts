// The shape of every aggregate: pure decide/evolve over a discriminated union of events.
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

export interface Decider<State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
}

export function fold<State, Event extends DomainEvent>(d: Decider<State, Event>, events: Event[], from?: State): State {
  return events.reduce((s, e) => d.evolve(s, e), from ?? d.initialState());
}

/** Exhaustiveness check: a new event type nobody handles fails to compile. */
export function unreachable(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
