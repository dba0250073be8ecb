// Reads aggregates from the event store and appends their decisions with optimistic concurrency.
// A small in-process cache keeps each stream's folded state and version, so a hot stream (a wallet)
// is not re-read from its first event on every command; the expected version on append keeps the
// cache honest (a conflict drops the entry and the command is decided again). A stream a decision
// only reads (`tx.read`: the merchant a quote is priced with) is held to the same check: the append
// commits only if it is still at the version read (AppendOptions.unchanged).
//
// Inside `transact` the cache is trusted without a read: a cached state can only lag the store
// (events are never removed), and deciding on a lagging state either appends with a stale expected
// version (a conflict: decided again from a fresh read) or refuses / decides nothing, in which case
// the command is decided again from a fresh read before that answer stands. A successful append
// moves the cache on with the events it committed. Outside `transact`, `load` always reads the tail.
//
// Snapshots (issue 32), for deciders that opt in (Decider.snapshot): a stream that is not cached is
// loaded from its latest snapshot of the decider's shape and the events after it (a snapshot of
// another shape, or one that fails to read or decode, is ignored: the stream is folded from its
// first event). A snapshot only ever holds a state this process folded from events the store
// confirmed (a read, or an append committed at the expected version), so it is the fold of its
// stream up to its version, which the audit checks. Once a stream is `every` events past the latest
// snapshot known here, a new one is written after the load or append that got it there, in the
// background: the command's answer never waits for it and never fails with it.
import { MAX_DECISION_AGE_MS } from '../domain/wallet.ts';
import type { CommandDecider, Decider, DomainEvent, SnapshotCodec } from '../domain/decider.ts';
import {
  WrongExpectedVersion,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type StreamAppend,
} from '../infra/eventstore/types.ts';

/** What an attempt decided: the appends and its answer. */
interface Attempted<R> {
  appends: StreamAppend[];
  result: R;
  /**
   * The answer holds refusals that were not thrown (a set of commands, one refused, the others
   * appended): like a thrown refusal, it stands only once decided on fresh state.
   */
  refusedSome?: boolean;
}

export interface Loaded<S> {
  streamId: string;
  state: S;
  version: number;
}

/** What an attempt inside `transact` loads its aggregates with. */
export interface AttemptLoader {
  load<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<Loaded<S>>;
  /**
   * A stream the decision reads but does not write, loaded like `load` (the cache, trusted): the
   * append then commits only if the stream is still at the version read, so the decision stands on
   * the stream as it is at the commit; if it moved, the attempt is decided again on fresh state.
   */
  read<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<Loaded<S>>;
}

interface Used {
  decider: Decider<unknown, DomainEvent>;
  state: unknown;
  version: number;
  fromCache: boolean;
  /** Read with `tx.read`: required unchanged by the append unless the attempt writes to it. */
  readOnly: boolean;
}

/** Stream states kept (the least recently used go first); cache-sizes.ts picks it per mode. */
export const AGGREGATE_CACHE_LIMIT = 10_000;
/**
 * Conflicts come only from other processes (this one takes turns per stream), so a few processes
 * racing for one hot wallet need a handful of attempts; the jittered pause spreads them out. Past
 * the limit the conflict surfaces (as a 5xx, nothing stored, so the client's retry is safe).
 */
const MAX_ATTEMPTS = 30;

/** Nothing was appended: every attempt outlived MAX_DECISION_AGE_MS (a stalled database); the caller may retry. */
export class DecisionTooOld extends Error {
  override name = 'DecisionTooOld';
}

/**
 * A decision dated too long ago would commit a movement inside a period already answered settled
 * (domain/wallet.ts SETTLE_MS): it is decided again with a fresh time, or, after every attempt, given up.
 */
function tooOld(attemptStarted: number, attempt: number): boolean {
  if (performance.now() - attemptStarted <= MAX_DECISION_AGE_MS) return false;
  if (attempt < MAX_ATTEMPTS) return true;
  throw new DecisionTooOld(`a decision took over ${MAX_DECISION_AGE_MS} ms ${MAX_ATTEMPTS} times: nothing appended`);
}
const conflictPauseMs = (attempt: number) => Math.random() * Math.min(50, 2 * attempt);

export class Aggregates {
  private cache = new Map<string, { state: unknown; version: number }>();
  private locks = new Map<string, Promise<void>>();
  /** The version of each stream's latest snapshot known here (read or written), bounded like the cache. */
  private snapshotAt = new Map<string, number>();

  constructor(
    readonly store: EventStore,
    /** Stream states kept at most. */
    readonly limit = AGGREGATE_CACHE_LIMIT,
    /** Told of a snapshot that could not be read, decoded or written (the load or command goes on). */
    readonly onSnapshotError: (err: unknown, streamId: string) => void = () => undefined,
  ) {}

  async load<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<Loaded<S>> {
    const cached = (this.cache.get(streamId) as { state: S; version: number } | undefined)
      ?? (decider.snapshot ? await this.fromSnapshot(streamId, decider.snapshot) : undefined);
    const events = await this.store.readStream(streamId, cached ? cached.version + 1 : 1);
    let state = cached ? cached.state : decider.initialState();
    let version = cached ? cached.version : 0;
    for (const e of events) {
      state = decider.evolve(state, { type: e.type, data: e.data } as unknown as E);
      version = e.version;
    }
    if (version > 0) this.remember(streamId, state, version);
    this.snapshotIfDue(streamId, decider, state, version);
    return { streamId, state, version };
  }

  /** The stream's latest snapshot of the codec's shape, decoded; undefined if none is usable. */
  private async fromSnapshot<S>(streamId: string, codec: SnapshotCodec<S>): Promise<{ state: S; version: number } | undefined> {
    try {
      const snapshot = await this.store.readSnapshot(streamId);
      // Another shape: fold from the events, and snapshot the new shape once due (as if none).
      if (!snapshot || snapshot.shape !== codec.shape) return undefined;
      this.noteSnapshot(streamId, snapshot.version);
      return { state: codec.decode(snapshot.state), version: snapshot.version };
    } catch (err) {
      this.onSnapshotError(err, streamId);
      return undefined;
    }
  }

  /**
   * Writes a snapshot in the background when the stream is `every` events past the latest one known
   * here. Never awaited, never throws: the events stay the truth, a lost snapshot costs a longer read.
   */
  private snapshotIfDue<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>, state: S, version: number): void {
    const codec = decider.snapshot;
    if (!codec || version - (this.snapshotAt.get(streamId) ?? 0) < codec.every) return;
    this.noteSnapshot(streamId, version);
    void Promise.resolve()
      .then(() => this.store.writeSnapshot(streamId, { version, shape: codec.shape, state: codec.encode(state) }))
      .catch((err: unknown) => this.onSnapshotError(err, streamId));
  }

  private noteSnapshot(streamId: string, version: number): void {
    this.snapshotAt.delete(streamId);
    this.snapshotAt.set(streamId, version);
    if (this.snapshotAt.size > this.limit) this.snapshotAt.delete(this.snapshotAt.keys().next().value as string);
  }

  private remember(streamId: string, state: unknown, version: number): void {
    this.cache.delete(streamId);
    this.cache.set(streamId, { state, version });
    if (this.cache.size > this.limit) this.cache.delete(this.cache.keys().next().value as string);
  }

  forget(streamId: string): void {
    this.cache.delete(streamId);
  }

  /**
   * For facts that never change once a stream exists (a quote's merchant, flow, currencies): the
   * cached state when the stream is known to exist, else a read. The cached state may lag the
   * store, never lead it, so nothing that appears later in a stream may be read this way.
   */
  async peek<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<Loaded<S>> {
    const cached = this.cache.get(streamId) as { state: S; version: number } | undefined;
    if (cached && cached.version > 0) return { streamId, ...cached };
    return this.load(streamId, decider);
  }

  /**
   * The cached state of a stream that exists, if it is at `version` or newer; never a read. For a
   * caller that knows how new a state it needs (infra/eventstore/seen-versions.ts).
   */
  cachedAtLeast<S>(streamId: string, version: number): Loaded<S> | undefined {
    const cached = this.cache.get(streamId) as { state: S; version: number } | undefined;
    return cached && cached.version > 0 && cached.version >= version ? { streamId, ...cached } : undefined;
  }

  /**
   * Like cachedAtLeast, but also a stream remembered empty (version 0, e.g. by assumeNew after a
   * read found nothing): for a caller that knows no event of the stream was appended past `version`.
   */
  cachedAsOf<S>(streamId: string, version: number): Loaded<S> | undefined {
    const cached = this.cache.get(streamId) as { state: S; version: number } | undefined;
    return cached && cached.version >= version ? { streamId, ...cached } : undefined;
  }

  /**
   * A yes/no question whose "yes" may come from a lagging state (a stale "yes" costs only work that
   * is idempotent anyway) but whose "no" must hold on the store as it is now: a lagging state can
   * say "no" merely because what makes it "yes" was appended later (a transfer's next disbursement
   * attempt). Asked of the cached state; a "no" is asked again of a fresh read.
   */
  async yesFromCache<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>, question: (state: S) => boolean): Promise<boolean> {
    const cached = this.cache.get(streamId) as { state: S; version: number } | undefined;
    if (cached && cached.version > 0 && question(cached.state)) return true;
    return question((await this.load(streamId, decider)).state);
  }

  /**
   * A stream whose id was drawn moments ago (a fresh idempotency claim's resource id) cannot exist
   * yet: `transact` may decide on its initial state without reading it (the expected version 0
   * still guards the append).
   */
  assumeNew<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): void {
    if (!this.cache.has(streamId)) this.remember(streamId, decider.initialState(), 0);
  }

  /**
   * Runs `attempt` (load through `tx`, decide, return the appends) and appends atomically; on a
   * version conflict, decides again from fresh state. Commands on the same streams in this process
   * take turns, so conflicts only come from other processes.
   */
  async transact<R>(
    lockKeys: string[],
    attempt: (tx: AttemptLoader) => Promise<Attempted<R>>,
  ): Promise<{ result: R; append: AppendResult | undefined }> {
    return this.withLocks([...new Set(lockKeys)].sort(), async () => {
      let trustCache = true;
      for (let i = 1; ; i++) {
        const attemptStarted = performance.now();
        const used = new Map<string, Used>();
        const loadFor = (readOnly: boolean) => async <S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<Loaded<S>> => {
          const cached = trustCache ? (this.cache.get(streamId) as { state: S; version: number } | undefined) : undefined;
          const loaded = cached ? { streamId, ...cached } : await this.loadFresh(streamId, decider, readOnly);
          const earlier = used.get(streamId);
          used.set(streamId, {
            decider: decider as unknown as Decider<unknown, DomainEvent>, state: loaded.state, version: loaded.version,
            fromCache: !!cached, readOnly: readOnly && (earlier?.readOnly ?? true),
          });
          return loaded;
        };
        const tx: AttemptLoader = { load: loadFor(false), read: loadFor(true) };
        const unverified = () => [...used].filter(([, u]) => u.fromCache).map(([id]) => id);
        let outcome: Attempted<R>;
        try {
          outcome = await attempt(tx);
        } catch (err) {
          // A refusal decided on cached state is confirmed on fresh state before it stands.
          const stale = unverified();
          if (stale.length === 0) throw err;
          for (const id of stale) this.forget(id);
          trustCache = false;
          continue;
        }
        const nonEmpty = outcome.appends.filter((a) => a.events.length > 0);
        // "Nothing to do", and refusals answered beside what is appended (a set's items), are confirmed on fresh state too.
        if (nonEmpty.length === 0 || outcome.refusedSome) {
          const stale = unverified();
          if (stale.length === 0 && nonEmpty.length === 0) return { result: outcome.result, append: undefined };
          if (stale.length > 0) {
            for (const id of stale) this.forget(id);
            trustCache = false;
            continue;
          }
        }
        if (tooOld(attemptStarted, i)) continue;
        const written = new Set(nonEmpty.map((a) => a.streamId));
        const unchanged = [...used].filter(([id, u]) => u.readOnly && !written.has(id)).map(([id, u]) => ({ streamId: id, version: u.version }));
        try {
          const append = await this.store.append(nonEmpty, unchanged.length > 0 ? { unchanged } : undefined);
          try {
            this.advance(used, nonEmpty, append);
          } catch {
            // The append is committed whatever happens to the cache: never fail the command for it.
            for (const a of nonEmpty) this.forget(a.streamId);
          }
          return { result: outcome.result, append };
        } catch (err) {
          if (err instanceof WrongExpectedVersion && i < MAX_ATTEMPTS) {
            for (const a of nonEmpty) this.forget(a.streamId);
            for (const u of unchanged) this.forget(u.streamId);
            await new Promise((r) => setTimeout(r, conflictPauseMs(i)));
            continue;
          }
          // In doubt (e.g. a lost connection): read next time.
          for (const a of nonEmpty) this.forget(a.streamId);
          for (const u of unchanged) this.forget(u.streamId);
          throw err;
        }
      }
    });
  }

  /**
   * The one-stream command, the shape most commands have: load the stream, decide the command on
   * its state, append what was decided with the version loaded (a conflict is decided again on fresh
   * state, bounded, by `transact`). Answers the state after the events and what was appended.
   */
  async execute<S, E extends DomainEvent, C>(
    streamId: string,
    decider: CommandDecider<S, E, C>,
    command: C | (() => C),
    meta: EventMetadata,
  ): Promise<{ state: S; events: E[]; append: AppendResult | undefined }> {
    const { result, append } = await this.transact([streamId], async (tx) => {
      const loaded = await tx.load(streamId, decider);
      // A command given as a function is built again on each attempt: one that carries the time
      // reads it then, so an event decided again after a conflict is never dated before the one that won.
      const events = decider.decide(typeof command === 'function' ? (command as () => C)() : command, loaded.state);
      const state = events.reduce((st, e) => decider.evolve(st, e), loaded.state);
      return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: { state, events } };
    });
    return { ...result, append };
  }

  /**
   * `load` inside `transact`. A stream read but not written that does not exist yet (an operator
   * never made unavailable) is remembered empty too: the append's "unchanged at version 0" guards it
   * like any other, and the next attempts need no read of it.
   */
  private async loadFresh<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>, readOnly: boolean): Promise<Loaded<S>> {
    const loaded = await this.load(streamId, decider);
    if (readOnly && loaded.version === 0) this.remember(streamId, loaded.state, 0);
    return loaded;
  }

  /** Moves the cache of each appended stream on by the events just committed to it. */
  private advance(used: Map<string, Used>, appends: StreamAppend[], result: AppendResult): void {
    for (const a of appends) {
      const u = used.get(a.streamId);
      const version = result.versions[a.streamId];
      if (!u || version === undefined || version !== (a.expectedVersion === 'any' ? Number.NaN : a.expectedVersion + a.events.length)) {
        this.forget(a.streamId); // not loaded here, or written with 'any': read next time
        continue;
      }
      // The events as stored (JSON round trip), so the state is the one a fresh load would fold.
      const recorded = result.events.filter((e) => e.streamId === a.streamId).sort((x, y) => x.version - y.version);
      if (recorded.length !== a.events.length) {
        this.forget(a.streamId);
        continue;
      }
      let state = u.state;
      for (const e of recorded) state = u.decider.evolve(state, { type: e.type, data: e.data } as DomainEvent);
      this.remember(a.streamId, state, version);
      this.snapshotIfDue(a.streamId, u.decider, state, version);
    }
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
