// PostgreSQL event store (also on PGlite).
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
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from './types.ts';
import { pollingSubscription, Wakeup } from './polling-subscription.ts';

export const APPEND_LOCK_KEY = 7_201_410_001; // arbitrary, fixed: the global append lock
const MAX_BATCH_APPENDS = 256;
const MAX_EVENTS_PER_APPEND = 1000;
const NOTIFY_CHANNEL = 'event_store_appended';

interface Pending {
  appends: StreamAppend[];
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
  metadata: Record<string, unknown>;
  created_at: Date | string;
}

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    version: row.stream_version,
    position: BigInt(row.global_position),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  };
}

export class PostgresEventStore implements EventStore {
  readonly name: string;
  private queue: Pending[] = [];
  private writing = false;
  private readonly wakeup = new Wakeup();
  private listener: pg.Client | undefined;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {
    this.name = db.kind;
  }

  /** Listens for other processes' appends (PostgreSQL only; PGlite is single-process). */
  async start(): Promise<void> {
    if (!this.db.url) return;
    const client = new pg.Client({ connectionString: this.db.url });
    client.on('error', () => undefined); // a dropped listener only slows wake-ups to the poll interval
    await client.connect();
    client.on('notification', (msg) => {
      this.wakeup.signal(msg.payload ? BigInt(msg.payload) : undefined);
    });
    await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    this.listener = client;
  }

  append(appends: StreamAppend[]): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    for (const a of appends) {
      if (a.events.length === 0) throw new Error(`append to ${a.streamId} with no events`);
      if (a.events.length > MAX_EVENTS_PER_APPEND) throw new Error(`too many events for ${a.streamId}`);
    }
    const ids = new Set(appends.map((a) => a.streamId));
    if (ids.size !== appends.length) throw new Error('one append names the same stream twice');
    return new Promise((resolve, reject) => {
      this.queue.push({ appends, resolve, reject });
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH_APPENDS);
        try {
          const outcomes = await this.writeBatch(batch);
          let head = 0n;
          batch.forEach((p, i) => {
            const o = outcomes[i]!;
            if (o instanceof Error) p.reject(o);
            else {
              if (o.position > head) head = o.position;
              p.resolve(o);
            }
          });
          if (head > 0n) this.wakeup.signal(head);
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private async writeBatch(batch: Pending[]): Promise<Array<AppendResult | Error>> {
    return this.db.knex.transaction(async (tx) => {
      await tx.raw('SELECT pg_advisory_xact_lock(?)', [APPEND_LOCK_KEY]);
      const streamIds = [...new Set(batch.flatMap((p) => p.appends.map((a) => a.streamId)))];
      const current = await tx.raw<{ rows: Array<{ stream_id: string; version: number }> }>(
        'SELECT stream_id, version FROM streams WHERE stream_id = ANY(?::text[])',
        [streamIds],
      );
      const versions = new Map<string, number>(streamIds.map((id) => [id, 0]));
      for (const r of current.rows) versions.set(r.stream_id, r.version);

      const now = this.clock.now();
      const cols = {
        stream: [] as string[], version: [] as number[], id: [] as string[], type: [] as string[],
        data: [] as string[], meta: [] as string[], at: [] as string[],
      };
      const outcomes: Array<{ ok: true; eventIds: string[]; versions: Record<string, number> } | Error> = [];
      for (const p of batch) {
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
            cols.stream.push(a.streamId);
            cols.version.push(v);
            cols.id.push(id);
            cols.type.push(e.type);
            cols.data.push(JSON.stringify(e.data));
            cols.meta.push(JSON.stringify(e.metadata ?? {}));
            cols.at.push(now.toISOString());
          }
          versions.set(a.streamId, v);
          newVersions[a.streamId] = v;
        }
        outcomes.push({ ok: true, eventIds, versions: newVersions });
      }
      if (cols.id.length === 0) return outcomes as Error[];

      const inserted = await tx.raw<{ rows: Row[] }>(
        `INSERT INTO events (stream_id, stream_version, event_id, type, data, metadata, created_at)
         SELECT * FROM unnest(?::text[], ?::int[], ?::uuid[], ?::text[], ?::jsonb[], ?::jsonb[], ?::timestamptz[])
         RETURNING global_position, stream_id, stream_version, event_id, type, data, metadata, created_at`,
        [cols.stream, cols.version, cols.id, cols.type, cols.data, cols.meta, cols.at],
      );
      const touched = [...versions.entries()];
      await tx.raw(
        `INSERT INTO streams (stream_id, version) SELECT * FROM unnest(?::text[], ?::int[])
         ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version`,
        [touched.map(([s]) => s), touched.map(([, v]) => v)],
      );
      const byId = new Map(inserted.rows.map((r) => [r.event_id, toRecorded(r)]));
      let head = 0n;
      for (const r of byId.values()) if (r.position > head) head = r.position;
      if (this.db.kind === 'postgres') await tx.raw(`SELECT pg_notify(?, ?)`, [NOTIFY_CHANNEL, head.toString()]);
      return outcomes.map((o) => {
        if (o instanceof Error) return o;
        const events = o.eventIds.map((id) => byId.get(id)!);
        const position = events.reduce((m, e) => (e.position > m ? e.position : m), 0n);
        return { position, versions: o.versions, events };
      });
    });
  }

  async readStream(streamId: string, fromVersion = 1): Promise<RecordedEvent[]> {
    const r = await this.db.knex.raw<{ rows: Row[] }>(
      `SELECT global_position, stream_id, stream_version, event_id, type, data, metadata, created_at
       FROM events WHERE stream_id = ? AND stream_version >= ? ORDER BY stream_version`,
      [streamId, fromVersion],
    );
    return r.rows.map(toRecorded);
  }

  async readAll(after: bigint, limit: number): Promise<RecordedEvent[]> {
    const r = await this.db.knex.raw<{ rows: Row[] }>(
      `SELECT global_position, stream_id, stream_version, event_id, type, data, metadata, created_at
       FROM events
       WHERE global_position > ?
       ORDER BY global_position LIMIT ?`,
      [after.toString(), limit],
    );
    return r.rows.map(toRecorded);
  }

  subscribe(opts: SubscribeOptions): Subscription {
    return pollingSubscription((a, l) => this.readAll(a, l), this.wakeup, opts);
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
  }
}

export type { Knex };
