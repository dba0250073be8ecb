// PostgreSQL event store (on DATABASE_URL or the embedded server).
//
// Ordering: a sequence hands out global positions before commit, so a reader following the
// position alone could pass a position whose transaction commits later and skip it for ever.
// The guard: every append transaction first takes one transaction-scoped advisory lock, *before*
// it draws positions, and holds it until it has committed (PostgreSQL makes a transaction visible
// before it releases its locks). So append transactions, across all processes, commit one after
// the other in position order: a snapshot that sees position P sees every committed position below
// P, and a reader that follows positions never skips a late commit. One stream's events can never
// be reordered either (each append also checks its expected version under the lock).
//
// Why not Emmett's `transaction_id < pg_snapshot_xmin(pg_current_snapshot())` on reads as well:
// the snapshot's xmin is cluster-wide, so any write transaction in any database of the server (a
// migration, a long batch, another tenant's service) holds back every reader of this store until it
// ends: projections stall and read-your-writes waits, for a guarantee the lock already gives. The
// writing transaction's id is still stored (`transaction_id`, xid8) for diagnosis.
// test/helpers/eventstore-contract.ts proves the order with appenders spread over several store
// instances with pools of their own, on real PostgreSQL.
// Throughput comes from group commit: appends that arrive while a transaction is in flight are
// batched into the next one (each keeps its own expected-version check and its own outcome).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Knex } from 'knex';
import type { Database } from '../db.ts';
import type { Clock } from '../clock.ts';
import {
  WrongExpectedVersion,
  type AppendResult,
  type EventStore,
  type ReadAllOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  type AppendOptions,
  type UnchangedStream,
  type Snapshot,
} from './types.ts';
import { pollingSubscription, Wakeup } from './polling-subscription.ts';
import { RecentAppends } from './recent-appends.ts';
import { checkAppend } from './check-append.ts';
import { StatementBatcher } from '../statement-batcher.ts';
import { crashPoint, inDoubtPoint } from '../crash-points.ts';

export const APPEND_LOCK_KEY = 7_201_410_001; // arbitrary, fixed: the global append lock
const MAX_BATCH_APPENDS = 256;
const NOTIFY_CHANNEL = 'event_store_appended';
/** Plans of one batch before giving up on versions that keep moving (each round is one round trip). */
const MAX_PLAN_ROUNDS = 16;
const SEEN_VERSIONS_KEPT = 100_000;

interface Pending {
  appends: StreamAppend[];
  /** Streams that must still be at a version (read, not written: types.ts UnchangedStream). */
  unchanged: UnchangedStream[];
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface Row {
  global_position: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  type: string;
  data: Record<string, unknown>;
  /** Null where the read left it out (readAll's `metadata: false`). */
  metadata: Record<string, unknown> | null;
  /** created_at in epoch milliseconds: a float is parsed for a fraction of what a timestamp's text costs. */
  created_ms: number | string;
}

/** A row's columns as toRecorded takes them (`metadata` may be swapped for NULL). */
const columns = (metadata = true) =>
  `global_position, stream_id, stream_version, event_id, type, data, ${metadata ? 'metadata' : 'NULL AS metadata'}, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms`;
const COLUMNS = columns();
const COLUMNS_WITHOUT_METADATA = columns(false);

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    version: row.stream_version,
    position: BigInt(row.global_position),
    type: row.type,
    data: row.data,
    metadata: row.metadata ?? {},
    createdAt: new Date(Number(row.created_ms)),
  };
}

// One round trip for a batch (migrations 014, 018): the append lock, the check of the versions the
// batch was planned on, the insert, the streams' versions and the wake-up for other processes. The events go as one JSON document: as `jsonb[]` arrays node-postgres copied each
// event's data and metadata twice to escape it, and the server parsed the array before the JSON.
const APPEND_SQL = `SELECT ${COLUMNS}, conflict FROM event_store_append($1, $2, $3, $4::jsonb, $5, $6, $7, $8)`;

/** Sends event_store_append's arguments but the last (the wake-up's channel); returns its rows. */
type AppendCall = (values: unknown[]) => Promise<unknown[]>;

interface BatchPlan {
  outcomes: Array<{ ok: true; eventIds: string[]; versions: Record<string, number> } | Error>;
  /** The rows to insert, in position order, as event_store_append's document takes them (migration 018). */
  events: Array<{ s: string; v: number; i: string; t: string; d: Record<string, unknown>; m: Record<string, unknown> }>;
  /** The batch's created_at. */
  at: string;
  /** Every stream the batch was planned on, at its version once the batch is written. */
  versions: Map<string, number>;
  /** The streams written to, at their new versions. */
  moved: Map<string, number>;
}

/** Each pending append's expected-version check against the locked versions, and the rows to insert. */
function planBatch(batch: Pending[], versions: Map<string, number>, now: Date): BatchPlan {
  const events: BatchPlan['events'] = [];
  const outcomes: BatchPlan['outcomes'] = [];
  const moved = new Map<string, number>();
  const at = now.toISOString();
  for (const p of batch) {
    // An earlier append of this batch that wrote to a stream this one needs unchanged moved it.
    const stale = p.unchanged.find((u) => u.version !== versions.get(u.streamId));
    if (stale) {
      outcomes.push(new WrongExpectedVersion(stale.streamId, stale.version, versions.get(stale.streamId)!));
      continue;
    }
    const failed = p.appends.find((a) => a.expectedVersion !== 'any' && a.expectedVersion !== versions.get(a.streamId));
    if (failed) {
      outcomes.push(new WrongExpectedVersion(failed.streamId, failed.expectedVersion, versions.get(failed.streamId)!));
      continue;
    }
    const eventIds: string[] = [];
    const newVersions: Record<string, number> = {};
    for (const a of p.appends) {
      let v = versions.get(a.streamId)!;
      for (const e of a.events) {
        v += 1;
        const id = e.id ?? randomUUID();
        eventIds.push(id);
        events.push({ s: a.streamId, v, i: id, t: e.type, d: e.data, m: e.metadata ?? {} });
      }
      versions.set(a.streamId, v);
      moved.set(a.streamId, v);
      newVersions[a.streamId] = v;
    }
    outcomes.push({ ok: true, eventIds, versions: newVersions });
  }
  return { outcomes, events, at, versions, moved };
}

function insertValues(plan: BatchPlan): unknown[] {
  const moved = [...plan.moved.entries()];
  return [JSON.stringify(plan.events), plan.at, moved.map(([s]) => s), moved.map(([, v]) => v)];
}

function finishBatch(plan: BatchPlan, rows: Row[]): Array<AppendResult | Error> {
  const byId = new Map(rows.map((r) => [r.event_id, toRecorded(r)]));
  return plan.outcomes.map((o) => {
    if (o instanceof Error) return o;
    const events = o.eventIds.map((id) => byId.get(id)!);
    const position = events.reduce((m, e) => (e.position > m ? e.position : m), 0n);
    return { position, versions: o.versions, events };
  });
}

export class PostgresEventStore implements EventStore {
  readonly name = 'postgres';
  private queue: Pending[] = [];
  private writing = false;
  private readonly wakeup = new Wakeup();
  /** This process's latest commits, for its own subscribers (see recent-appends.ts). */
  private readonly recent: RecentAppends;
  /** Events this process keeps of its latest commits (cache-sizes.ts). */
  get recentEventsKept(): number {
    return this.recent.limit;
  }
  /**
   * Reads of a stream's tail (from a version to its end) asked within one turn of the event loop, in
   * one statement (bench issue 8: a webhook's target is read from the merchant stream's tail, two
   * reads per payin, a quarter of its statements). The statement is sent after every call in it was
   * made, so each sees every event committed before its call, as a read of its own would.
   */
  private readonly tails = new StatementBatcher<{ streamId: string; from: number }, RecordedEvent[]>((wants) => this.readTails(wants));
  /** The batch being written, until its events are in `recent` and its appends resolved. */
  private inFlight: Promise<void> | undefined;
  private listener: pg.Client | undefined;
  private closed = false;
  /** Stream versions this store last saw (its own appends, conflicts), to plan batches on. */
  private readonly seen = new Map<string, number>();
  /** The one connection appends use (they take turns under the append lock anyway). */
  private readonly writer: pg.Pool;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    opts: { recentEvents?: number } = {},
  ) {
    this.recent = new RecentAppends(opts.recentEvents);
    this.writer = new pg.Pool({ connectionString: db.url, max: 1 });
    this.writer.on('error', () => undefined); // an idle connection that dropped is replaced on next use
  }

  /** Listens for other processes' appends. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.db.url });
    client.on('error', () => undefined); // a dropped listener only slows wake-ups to the poll interval
    await client.connect();
    client.on('notification', (msg) => {
      this.wakeup.signal(msg.payload ? BigInt(msg.payload) : undefined);
    });
    await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    this.listener = client;
  }

  append(appends: StreamAppend[], opts: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    const unchanged = opts.unchanged ?? [];
    checkAppend(appends, unchanged);
    return new Promise((resolve, reject) => {
      this.queue.push({ appends, unchanged, resolve, reject });
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        // One turn of the event loop before taking the batch: the callers whose previous appends
        // just resolved append again in their continuations, and join this batch instead of
        // waiting behind a batch of one.
        await new Promise<void>((r) => setImmediate(r));
        const batch = this.queue.splice(0, MAX_BATCH_APPENDS);
        let batchDone!: () => void;
        this.inFlight = new Promise<void>((r) => (batchDone = r));
        try {
          const outcomes = await this.writeBatch(batch);
          crashPoint('after-append', () => batch.flatMap((p) => p.appends.flatMap((a) => a.events.map((e) => e.type))));
          let head = 0n;
          const committed: RecordedEvent[] = [];
          for (const o of outcomes) if (!(o instanceof Error)) committed.push(...o.events);
          this.recent.add(committed.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0)));
          const inDoubt = inDoubtPoint(() => batch.flatMap((p) => p.appends.flatMap((a) => a.events.map((e) => e.type))));
          batch.forEach((p, i) => {
            const o = outcomes[i]!;
            if (o instanceof Error) return p.reject(o);
            if (o.position > head) head = o.position;
            if (inDoubt) p.reject(inDoubt);
            else p.resolve(o);
          });
          if (head > 0n) this.wakeup.signal(head);
        } catch (err) {
          for (const p of batch) p.reject(err);
        } finally {
          this.inFlight = undefined;
          batchDone();
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private writeBatch(batch: Pending[]): Promise<Array<AppendResult | Error>> {
    return this.onWriter(this.writer, (call) => this.appendInOneCall(batch, call));
  }

  /** Appends run on one connection of their own, the call prepared once. */
  private async onWriter<T>(writer: pg.Pool, work: (call: AppendCall) => Promise<T>): Promise<T> {
    const client = await writer.connect();
    let broken: Error | undefined;
    // A checked-out client is outside the pool's error listener: a server that goes away mid-append
    // (a restart, a fail-over) must fail this append, not kill the process with an unhandled 'error'.
    const onError = (err: Error) => { broken = err; };
    client.on('error', onError);
    try {
      return await work(async (values) => (await client.query({ name: 'es-append', text: APPEND_SQL, values: [...values, NOTIFY_CHANNEL] })).rows);
    } catch (err) {
      broken ??= (err as { code?: string }).code === undefined ? (err as Error) : undefined; // not a server error: drop the connection
      throw err;
    } finally {
      if (!broken) client.removeListener('error', onError); // a broken one is discarded: a late error stays handled
      client.release(broken);
    }
  }

  /**
   * One round trip per batch in the common case. The batch is planned on the versions this store
   * assumes (each stream's expected version, else the last version it saw), and event_store_append
   * (migration 014) checks them under the append lock: if a stream moved (another process, a stale
   * expectation), nothing is written, the actual versions come back, and the batch is planned again
   * on them (an append whose expectation was wrong then fails alone). The call is one statement, so
   * its own transaction: appends take turns under the append lock.
   */
  private async appendInOneCall(batch: Pending[], call: AppendCall): Promise<Array<AppendResult | Error>> {
    let versions = this.assumedVersions(batch);
    for (let round = 1; ; round++) {
      const checked = [...versions.entries()];
      const plan = planBatch(batch, new Map(versions), this.clock.now());
      // Nothing to write, each append refused on versions this store saw committed (a version
      // only grows, so an expectation below one is stale for certain): no round trip needed.
      if (plan.events.length === 0 && checked.every(([id, v]) => this.seen.get(id) === v)) return plan.outcomes as Error[];
      const values = [APPEND_LOCK_KEY, checked.map(([id]) => id), checked.map(([, v]) => v), ...insertValues(plan)];
      const rows = (await call(values)) as Array<Row & { conflict: boolean }>;
      if (rows.length > 0 && rows[0]!.conflict) {
        // Planned on versions that moved: plan again on the actual ones (they are final for this
        // round unless another process appends in between, hence the bound).
        if (round >= MAX_PLAN_ROUNDS) throw new Error(`event store: batch planned ${round} times on moving versions`);
        versions = new Map(rows.map((r) => [r.stream_id, r.stream_version]));
        this.remember(versions);
        continue;
      }
      this.remember(plan.versions);
      return plan.events.length === 0 ? plan.outcomes as Error[] : finishBatch(plan, rows);
    }
  }

  /**
   * The versions a batch is planned on: each stream's highest version known here, from the batch's
   * expectations and the last version this store saw (0 if none). A stream's version only grows, so
   * an expectation below the one seen is stale: planning on it would cost a round trip that fails
   * the whole batch (a hot stream's writers, retrying after a conflict, are often one behind).
   */
  private assumedVersions(batch: Pending[]): Map<string, number> {
    const versions = new Map<string, number>();
    for (const p of batch) {
      for (const a of p.appends) {
        const known = versions.get(a.streamId) ?? this.seen.get(a.streamId) ?? 0;
        versions.set(a.streamId, typeof a.expectedVersion === 'number' ? Math.max(known, a.expectedVersion) : known);
      }
      for (const u of p.unchanged) {
        const known = versions.get(u.streamId) ?? this.seen.get(u.streamId) ?? 0;
        versions.set(u.streamId, Math.max(known, u.version));
      }
    }
    return versions;
  }

  /** Keeps the newest versions seen (bounded: the oldest entries go first). */
  private remember(versions: Map<string, number>): void {
    for (const [id, v] of versions) {
      this.seen.delete(id);
      this.seen.set(id, v);
    }
    while (this.seen.size > SEEN_VERSIONS_KEPT) this.seen.delete(this.seen.keys().next().value as string);
  }

  async readStream(streamId: string, fromVersion = 1, toVersion?: number): Promise<RecordedEvent[]> {
    if (toVersion === undefined) return this.tails.submit({ streamId, from: fromVersion });
    // A bounded range this process committed recently (a webhook's snapshot of the resource it
    // just changed) comes from memory: every version in it is there, so it is the stream's.
    const mine = this.recent.range(streamId, Math.max(1, fromVersion), toVersion);
    if (mine) return mine;
    const r = await this.db.knex.raw<{ rows: Row[] }>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND stream_version >= ? AND stream_version <= ? ORDER BY stream_version`,
      [streamId, fromVersion, toVersion],
    );
    return r.rows.map(toRecorded);
  }

  private async readTails(wants: Array<{ streamId: string; from: number }>): Promise<RecordedEvent[][]> {
    if (wants.length === 1) {
      const r = await this.db.knex.raw<{ rows: Row[] }>(
        `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND stream_version >= ? ORDER BY stream_version`,
        [wants[0]!.streamId, wants[0]!.from],
      );
      return [r.rows.map(toRecorded)];
    }
    // Each stream once, from the lowest version any call asked for; each call takes its own part.
    const from = new Map<string, number>();
    for (const w of wants) from.set(w.streamId, Math.min(w.from, from.get(w.streamId) ?? w.from));
    const r = await this.db.knex.raw<{ rows: Row[] }>(
      `SELECT e.* FROM unnest(?::text[], ?::int[]) AS w(wanted, from_version),
         LATERAL (SELECT ${COLUMNS} FROM events WHERE stream_id = w.wanted AND stream_version >= w.from_version) e`,
      [[...from.keys()], [...from.values()]],
    );
    const byStream = new Map<string, RecordedEvent[]>();
    for (const row of r.rows) {
      const e = toRecorded(row);
      const list = byStream.get(e.streamId);
      if (list) list.push(e);
      else byStream.set(e.streamId, [e]);
    }
    for (const list of byStream.values()) list.sort((a, b) => a.version - b.version);
    return wants.map((w) => (byStream.get(w.streamId) ?? []).filter((e) => e.version >= w.from));
  }

  async readSnapshot(streamId: string): Promise<Snapshot | undefined> {
    const r = await this.db.knex.raw<{ rows: Array<{ version: number; shape: string; state: unknown }> }>(
      'SELECT version, shape, state FROM snapshots WHERE stream_id = ?', [streamId]);
    const row = r.rows[0];
    return row ? { version: row.version, shape: row.shape, state: row.state } : undefined;
  }

  async writeSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    // Two writers racing (processes, or a load and an append here) keep the newer one.
    await this.db.knex.raw(
      `INSERT INTO snapshots (stream_id, version, shape, state) VALUES (?, ?, ?, ?::jsonb)
       ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, shape = excluded.shape, state = excluded.state, written_at = now()
       WHERE excluded.version > snapshots.version`,
      [streamId, snapshot.version, snapshot.shape, JSON.stringify(snapshot.state)],
    );
  }

  async readAll(after: bigint, limit: number, opts: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const r = await this.db.knex.raw<{ rows: Row[] }>(
      `SELECT ${opts.metadata === false ? COLUMNS_WITHOUT_METADATA : COLUMNS}
       FROM events
       WHERE global_position > ?
       ORDER BY global_position LIMIT ?`,
      [after.toString(), limit],
    );
    return r.rows.map(toRecorded);
  }

  subscribe(opts: SubscribeOptions): Subscription {
    // A subscriber right behind this process's own commits takes them from memory; a short run is
    // fine here (the subscription reads again), unlike for readAll's other callers.
    return pollingSubscription(async (a, l) => {
      let mine = this.recent.after(a, l);
      if (mine.length === 0 && this.inFlight) {
        // Our own NOTIFY can arrive before the committing batch has put its events here: wait for it.
        await this.inFlight;
        mine = this.recent.after(a, l);
      }
      return mine.length > 0 ? mine : this.readAll(a, l);
    }, this.wakeup, opts);
  }

  async head(): Promise<bigint> {
    const r = await this.db.knex.raw<{ rows: Array<{ p: string | null }> }>(
      `SELECT max(global_position) AS p FROM events`,
    );
    return BigInt(r.rows[0]?.p ?? 0);
  }

  async healthy(): Promise<boolean> {
    try {
      await this.db.knex.raw('SELECT 1 FROM streams LIMIT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeup.signal();
    await this.listener?.end().catch(() => undefined);
    // Appends already queued finish first (drain), then the writer connection goes.
    while (this.writing) await new Promise((r) => setTimeout(r, 5));
    await this.writer.end().catch(() => undefined);
  }
}

export type { Knex };
