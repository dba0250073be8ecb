// KurrentDB (EventStoreDB) event store, with @kurrent/kurrentdb-client. Read models stay in
// PostgreSQL; only the events live here.
//
// Versions: our version N is the number of events in a stream, KurrentDB's revision is 0-based, so
// expectedVersion 0 = NO_STREAM, N = revision N - 1, 'any' = ANY; an event's version = revision + 1.
//
// Atomic multi-stream appends: the client's `multiStreamAppend` (KurrentDB 25.1 and later; all
// streams are written, each with its own expected-revision check, or none is). A single-stream
// append uses `appendToStream`, which every server version supports. A server older than 25.1
// cannot append to several streams atomically: the append is refused with a clear error rather than
// written stream by stream (which could leave half of a decision in the store).
//
// Global order: $all, read forwards. Our position is the event's commit position. Every append made
// through the gRPC API (appendToStream and multiStreamAppend alike) is an implicit transaction whose
// events are each "commit-alike" records, so each event's commit position is its own log position:
// unique and strictly increasing (see KurrentDB's AllReader). Reading $all from {commit: p,
// prepare: p} includes the event at p, so readAll and the subscription drop events at or before
// their checkpoint. System events (types and streams starting with `$`) are skipped. Positions are
// log offsets of this store only: read-model checkpoints taken on the PostgreSQL store mean nothing
// here (moving the events to KurrentDB means rebuilding the projections).
//
// Streams required unchanged (AppendOptions.unchanged): KurrentDB cannot make an append conditional
// on a stream it does not write, so each one's version is read just before the append. A change
// committed between that read and the append is not caught here (the PostgreSQL store checks under
// its append lock): the guarantee of reading the stream, then appending.
//
// Snapshots (types.ts Snapshot): each stream's in a stream of its own, `snapshot-<stream>`, kept to
// its newest event by `maxCount: 1` metadata; a snapshot is appended only on the revision it was
// checked against, so a newer one is never overwritten by an older one. Their event type is left
// out of $all by the same server-side filter as system events (readAll, the subscription, head).
//
// Metadata: multi-stream appends only take flat string-to-string metadata, so every event carries
// ours as two string properties: the metadata as JSON, and the time from the injected clock (the
// same `createdAt` the PostgreSQL store records). Events written by something else are read with
// their own JSON metadata and the server's timestamp.
import { randomUUID } from 'node:crypto';
import {
  ANY, BACKWARDS, END, NO_STREAM, START,
  KurrentDBClient, StreamNotFoundError, WrongExpectedVersionError,
  eventTypeFilter, jsonEvent,
  type AllStreamResolvedEvent, type AllStreamSubscription, type AppendStreamState, type EventData,
  type ReadPosition, type RecordedEvent as KurrentRecordedEvent,
} from '@kurrent/kurrentdb-client';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import {
  WrongExpectedVersion,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedVersion,
  type NewEvent,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  type AppendOptions,
  type Snapshot,
} from './types.ts';
import { checkAppend } from './check-append.ts';

const META_KEY = 'payments.metadata';
const CREATED_KEY = 'payments.created_at';
const GRPC_UNIMPLEMENTED = 12;
const SNAPSHOT_TYPE = 'payments.snapshot';
const snapshotStream = (streamId: string) => `snapshot-${streamId}`;
/** The event types read from $all: neither system events nor snapshots (a .NET regex, the server's). */
export const OUR_EVENT_TYPES = `^(?!\\$|${SNAPSHOT_TYPE.replace('.', '\\.')}$).*`;
const ourEvents = () => eventTypeFilter({ regex: OUR_EVENT_TYPES });

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

/** Our expected version (number of events; 0 = no stream) as KurrentDB's expected stream state. */
export function streamState(expected: ExpectedVersion): AppendStreamState {
  if (expected === 'any') return ANY;
  if (!Number.isInteger(expected) || expected < 0) throw new Error(`invalid expected version ${String(expected)}`);
  return expected === 0 ? NO_STREAM : BigInt(expected - 1);
}

/** Where a read of $all starts for a checkpoint (the event at the checkpoint itself included). */
export function positionFrom(after: bigint): ReadPosition {
  return after <= 0n ? START : { commit: after, prepare: after };
}

function isSystem(e: { streamId: string; type: string }): boolean {
  return e.type.startsWith('$') || e.streamId.startsWith('$') || e.type === SNAPSHOT_TYPE;
}

/** KurrentDB's version conflict in our terms (actual = number of events in the stream). */
export function conflict(err: WrongExpectedVersionError, appends: StreamAppend[]): WrongExpectedVersion {
  const a = appends.find((x) => x.streamId === err.streamName) ?? appends[0]!;
  const actual = err.actualState === NO_STREAM || typeof err.actualState !== 'bigint' ? 0 : Number(err.actualState) + 1;
  return new WrongExpectedVersion(a.streamId, a.expectedVersion, actual);
}

/** One of our events as KurrentDB event data: metadata and time as string properties. */
export function encodeEvent(e: NewEvent, at: string): { data: EventData; id: string } {
  const id = e.id ?? randomUUID();
  const metadata: Record<string, string> = { [META_KEY]: JSON.stringify(e.metadata ?? {}), [CREATED_KEY]: at };
  return { id, data: jsonEvent({ id, type: e.type, data: e.data, metadata }) };
}

/** A KurrentDB event as ours; `commit` is its commit position when read from $all. */
export function decodeEvent(e: KurrentRecordedEvent, commit: bigint | undefined): RecordedEvent {
  const raw = e.metadata;
  let metadata: EventMetadata = {};
  let createdAt = e.created;
  if (raw && typeof raw === 'object' && !(raw instanceof Uint8Array) && !Array.isArray(raw)) {
    const props = raw as Record<string, unknown>;
    if (typeof props[META_KEY] === 'string') {
      metadata = JSON.parse(props[META_KEY]) as EventMetadata;
      if (typeof props[CREATED_KEY] === 'string') createdAt = new Date(props[CREATED_KEY]);
    } else {
      metadata = props as EventMetadata;
    }
  }
  const data = e.isJson && e.data && typeof e.data === 'object' && !Array.isArray(e.data)
    ? e.data as Record<string, unknown>
    : {};
  const position = commit ?? e.position?.commit;
  if (position === undefined) throw new Error('KurrentDB did not return the event\'s position (server 22.6 or later is needed)');
  return {
    id: e.id, streamId: e.streamId, version: Number(e.revision) + 1, position, type: e.type,
    data, metadata, createdAt,
  };
}

/** An event read from $all, or undefined for what is not ours to deliver (system events, links). */
export function fromAll(resolved: AllStreamResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || resolved.link || isSystem(e)) return undefined;
  return decodeEvent(e as KurrentRecordedEvent, resolved.commitPosition ?? e.position.commit);
}

export interface KurrentEventStoreOptions {
  log?: Logger;
  /** Events per batch handed to a subscriber. */
  defaultBatchSize?: number;
}

export class KurrentEventStore implements EventStore {
  readonly name = 'kurrentdb';
  private readonly client: KurrentDBClient;
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  constructor(
    url: string,
    private readonly clock: Clock,
    private readonly opts: KurrentEventStoreOptions = {},
  ) {
    this.client = KurrentDBClient.connectionString(url);
  }

  async append(appends: StreamAppend[], opts: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) throw new Error('event store closed');
    const unchanged = opts.unchanged ?? [];
    checkAppend(appends, unchanged);
    for (const u of unchanged) {
      const actual = await this.versionOf(u.streamId);
      if (actual !== u.version) throw new WrongExpectedVersion(u.streamId, u.version, actual);
    }

    const at = this.clock.now().toISOString();
    const prepared = appends.map((a) => {
      const events = a.events.map((e) => encodeEvent(e, at));
      return { append: a, state: streamState(a.expectedVersion), events };
    });

    // The stream's revision after the append, by stream.
    const lastRevision = new Map<string, bigint>();
    try {
      if (prepared.length === 1) {
        const p = prepared[0]!;
        const r = await this.client.appendToStream(p.append.streamId, p.events.map((e) => e.data), { streamState: p.state });
        lastRevision.set(p.append.streamId, r.nextExpectedRevision);
      } else {
        const r = await this.client.multiStreamAppend(prepared.map((p) => ({
          streamName: p.append.streamId, expectedState: p.state, events: p.events.map((e) => e.data),
        })));
        for (const resp of r.responses) lastRevision.set(resp.streamName, resp.revision);
      }
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) throw conflict(err, appends);
      const code = (err as { code?: number; type?: string }).code;
      if (prepared.length > 1 && (code === GRPC_UNIMPLEMENTED || (err as { type?: string }).type === 'unsupported')) {
        throw new Error('this KurrentDB server cannot append to several streams atomically (multiStreamAppend needs KurrentDB 25.1 or later)');
      }
      throw err;
    }

    // Read the new events back: their positions and the server's record of them.
    const versions: Record<string, number> = {};
    const events: RecordedEvent[] = [];
    for (const p of prepared) {
      const ids = p.events.map((e) => e.id);
      const last = lastRevision.get(p.append.streamId);
      const written = await this.readWritten(p.append.streamId, ids, last);
      events.push(...written);
      versions[p.append.streamId] = written[written.length - 1]!.version;
    }
    events.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    return { position: events[events.length - 1]!.position, versions, events };
  }

  /** The events just written to a stream, found by their ids (at the revisions the append reported). */
  private async readWritten(streamId: string, ids: string[], lastRevision: bigint | undefined): Promise<RecordedEvent[]> {
    if (lastRevision !== undefined) {
      const first = lastRevision - BigInt(ids.length - 1);
      if (first >= 0n) {
        const got: RecordedEvent[] = [];
        for await (const r of this.client.readStream(streamId, { fromRevision: first, maxCount: ids.length, requiresLeader: true })) {
          if (r.event) got.push(decodeEvent(r.event as KurrentRecordedEvent, undefined));
        }
        if (got.length === ids.length && got.every((e, i) => e.id === ids[i])) return got;
      }
    }
    // The append was answered idempotently (the same ids written before) or revisions were not
    // reported: look the ids up among the stream's newest events.
    const wanted = new Set(ids);
    const found = new Map<string, RecordedEvent>();
    for await (const r of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 10_000, requiresLeader: true })) {
      if (r.event && wanted.has(r.event.id)) found.set(r.event.id, decodeEvent(r.event as KurrentRecordedEvent, undefined));
      if (found.size === wanted.size) break;
    }
    if (found.size !== wanted.size) throw new Error(`appended events not found in ${streamId}`);
    return ids.map((id) => found.get(id)!);
  }

  /** A stream's current version (0: no such stream), from its newest event, on the leader. */
  private async versionOf(streamId: string): Promise<number> {
    try {
      for await (const r of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1, requiresLeader: true })) {
        if (r.event) return Number(r.event.revision) + 1;
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return 0;
      throw err;
    }
    return 0;
  }

  async readStream(streamId: string, fromVersion = 1, toVersion?: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const from = Math.max(1, fromVersion);
    if (toVersion !== undefined && toVersion < from) return out;
    try {
      for await (const r of this.client.readStream(streamId, {
        fromRevision: BigInt(from - 1), ...(toVersion !== undefined ? { maxCount: toVersion - from + 1 } : {}),
      })) {
        if (r.event) out.push(decodeEvent(r.event as KurrentRecordedEvent, undefined));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  async readSnapshot(streamId: string): Promise<Snapshot | undefined> {
    return (await this.latestSnapshot(streamId))?.snapshot;
  }

  async writeSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    const stream = snapshotStream(streamId);
    const latest = await this.latestSnapshot(streamId);
    if (latest && latest.snapshot.version >= snapshot.version) return; // never backwards
    const event = jsonEvent({ type: SNAPSHOT_TYPE, data: { ...snapshot } as Record<string, unknown> });
    try {
      await this.client.appendToStream(stream, event, { streamState: latest ? latest.revision : NO_STREAM });
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) return; // another writer's snapshot came first
      throw err;
    }
    if (!latest) await this.client.setStreamMetadata(stream, { maxCount: 1 });
  }

  /** The newest snapshot event of a stream and its revision in the snapshot stream. */
  private async latestSnapshot(streamId: string): Promise<{ snapshot: Snapshot; revision: bigint } | undefined> {
    try {
      for await (const r of this.client.readStream(snapshotStream(streamId), { direction: BACKWARDS, fromRevision: END, maxCount: 1, requiresLeader: true })) {
        if (!r.event || !r.event.isJson) continue;
        const d = r.event.data as { version: number; shape: string; state: unknown };
        return { snapshot: { version: d.version, shape: d.shape, state: d.state }, revision: r.event.revision };
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return undefined;
      throw err;
    }
    return undefined;
  }

  async readAll(after: bigint, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    // The read starts at `after` itself (inclusive): one more than asked, then drop what is not after.
    for await (const r of this.client.readAll({ fromPosition: positionFrom(after), maxCount: limit + 1, filter: ourEvents() })) {
      const e = fromAll(r);
      if (!e || e.position <= after) continue;
      out.push(e);
      if (out.length === limit) break;
    }
    return out;
  }

  /**
   * Catch-up then live: a subscription to $all from the checkpoint. Events are handed over in
   * batches (whatever has arrived, up to the batch size) and the checkpoint moves only after the
   * handler returns; when the subscription drops or the handler fails, it subscribes again from the
   * checkpoint after a pause.
   */
  subscribe(opts: SubscribeOptions): Subscription {
    const batchSize = opts.batchSize ?? this.opts.defaultBatchSize ?? 500;
    let stopped = false;
    let checkpoint = opts.after;
    let current: AllStreamSubscription | undefined;
    let wake: () => void = () => undefined;
    const pause = (ms: number) => new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      wake = () => { clearTimeout(t); r(); };
    });
    const end = (sub: AllStreamSubscription) => sub.unsubscribe().catch(() => undefined).then(() => { sub.destroy(); });

    const loop = (async () => {
      let failures = 0;
      while (!stopped) {
        const sub = this.client.subscribeToAll({ fromPosition: positionFrom(checkpoint), filter: ourEvents() });
        current = sub;
        try {
          let batch: RecordedEvent[] = [];
          let queued = checkpoint;
          for await (const resolved of sub as AsyncIterable<AllStreamResolvedEvent>) {
            if (stopped) break;
            const e = fromAll(resolved);
            if (e && e.position > queued) {
              batch.push(e);
              queued = e.position;
            }
            if (batch.length > 0 && (batch.length >= batchSize || sub.readableLength === 0)) {
              await opts.handler(batch);
              checkpoint = batch[batch.length - 1]!.position;
              batch = [];
              failures = 0;
            }
          }
          if (!stopped) throw new Error('the subscription to $all ended');
        } catch (err) {
          if (stopped) break;
          failures++;
          opts.onError?.(err);
          this.opts.log?.warn({ err }, 'KurrentDB subscription dropped; subscribing again from the checkpoint');
          await end(sub);
          await pause(Math.min(5_000, 250 * 2 ** Math.min(failures, 5)));
          continue;
        }
        await end(sub);
      }
    })();

    const subscription: Subscription = {
      stop: async () => {
        stopped = true;
        wake();
        if (current) await end(current);
        await loop;
        this.subscriptions.delete(subscription);
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async head(): Promise<bigint> {
    for await (const r of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 50, filter: ourEvents() })) {
      const e = fromAll(r);
      if (e) return e.position;
    }
    return 0n;
  }

  async healthy(): Promise<boolean> {
    if (this.closed) return false;
    try {
      await withTimeout((async () => {
        for await (const r of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) void r;
      })(), 2_000);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await Promise.race([this.client.dispose(), sleep(5_000)]);
  }
}
