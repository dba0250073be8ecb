// Reads aggregates from the event store and appends their decisions with optimistic concurrency.
// A small in-process cache keeps each stream's folded state and version, so a hot stream (a wallet)
// is not re-read from its first event on every command; the expected version on append keeps the
// cache honest (a conflict drops the entry and the command is decided again).
import type { Decider, DomainEvent } from '../domain/decider.ts';
import {
  WrongExpectedVersion,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type StreamAppend,
} from '../infra/eventstore/types.ts';

export interface Loaded<S> {
  streamId: string;
  state: S;
  version: number;
}

const CACHE_LIMIT = 10_000;
/**
 * Conflicts come only from other processes (this one takes turns per stream), so a few processes
 * racing for one hot wallet need a handful of attempts; the jittered pause spreads them out. Past
 * the limit the conflict surfaces (as a 5xx, nothing stored, so the client's retry is safe).
 */
const MAX_ATTEMPTS = 30;
const conflictPauseMs = (attempt: number) => Math.random() * Math.min(50, 2 * attempt);

export class Aggregates {
  private cache = new Map<string, { state: unknown; version: number }>();
  private locks = new Map<string, Promise<void>>();

  constructor(readonly store: EventStore) {}

  async load<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<Loaded<S>> {
    const cached = this.cache.get(streamId) as { state: S; version: number } | undefined;
    const from = cached ? cached.version + 1 : 1;
    const events = await this.store.readStream(streamId, from);
    let state = cached ? cached.state : decider.initialState();
    let version = cached ? cached.version : 0;
    for (const e of events) {
      state = decider.evolve(state, { type: e.type, data: e.data } as unknown as E);
      version = e.version;
    }
    if (version > 0) this.remember(streamId, state, version);
    return { streamId, state, version };
  }

  private remember(streamId: string, state: unknown, version: number): void {
    this.cache.delete(streamId);
    this.cache.set(streamId, { state, version });
    if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
  }

  forget(streamId: string): void {
    this.cache.delete(streamId);
  }

  /**
   * Runs `attempt` (load, decide, return the appends) and appends atomically; on a version conflict,
   * decides again from fresh state. Commands on the same streams in this process take turns, so
   * conflicts only come from other processes.
   */
  async transact<R>(
    lockKeys: string[],
    attempt: () => Promise<{ appends: StreamAppend[]; result: R }>,
  ): Promise<{ result: R; append: AppendResult | undefined }> {
    return this.withLocks([...new Set(lockKeys)].sort(), async () => {
      for (let i = 1; ; i++) {
        const { appends, result } = await attempt();
        const nonEmpty = appends.filter((a) => a.events.length > 0);
        if (nonEmpty.length === 0) return { result, append: undefined };
        try {
          const append = await this.store.append(nonEmpty);
          return { result, append };
        } catch (err) {
          if (err instanceof WrongExpectedVersion && i < MAX_ATTEMPTS) {
            for (const a of nonEmpty) this.forget(a.streamId);
            await new Promise((r) => setTimeout(r, conflictPauseMs(i)));
            continue;
          }
          throw err;
        }
      }
    });
  }

  private async withLocks<T>(keys: string[], fn: () => Promise<T>): Promise<T> {
    const previous = keys.map((k) => this.locks.get(k) ?? Promise.resolve());
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = Promise.all(previous).then(() => mine);
    for (const k of keys) this.locks.set(k, chained);
    await Promise.all(previous);
    try {
      return await fn();
    } finally {
      release();
      for (const k of keys) if (this.locks.get(k) === chained) this.locks.delete(k);
    }
  }
}

/** Turns domain events into store events carrying the request's metadata. */
export function toNew(events: DomainEvent[], metadata: EventMetadata) {
  return events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown>, metadata }));
}
