// A stream's events before a batch, for read models that fold a stream into one row (money.ts) when
// the row's state is not in memory. The rows keep only the folded result (their events are in the
// event store already: keeping a copy in every row doubled what a write sends and a rebuild parses).
//
// Read inside the projection's transaction where the store is this database's `events` table (no
// second connection needed); through the store's own API otherwise (KurrentDB).
import type { Knex } from 'knex';
import type { EventStore } from '../infra/eventstore/types.ts';

export interface PastEvent {
  version: number;
  type: string;
  data: Record<string, unknown>;
}

/** Wanted: the events of `streamId` with a version below `before`. */
export interface HistoryWant {
  streamId: string;
  before: number;
}

/**
 * Every wanted stream's events (versions 1 to before − 1, in order), by stream id: read through `db`
 * (the projection's transaction, or the pool when the rows are prepared outside one).
 */
export type StreamHistory = (db: Knex | Knex.Transaction, wants: HistoryWant[]) => Promise<Map<string, PastEvent[]>>;

/** The PostgreSQL store keeps its events in this database, readable by a transaction. */
export function keepsEventsInThisDatabase(store: EventStore): boolean {
  return store.name === 'postgres';
}

export function historyOf(store: EventStore): StreamHistory {
  return keepsEventsInThisDatabase(store) ? readInTransaction : historyThroughStore(store);
}

async function readInTransaction(tx: Knex | Knex.Transaction, wants: HistoryWant[]): Promise<Map<string, PastEvent[]>> {
  const out = new Map<string, PastEvent[]>();
  if (wants.length === 0) return out;
  // One query for the whole batch, on the (stream_id, stream_version) key.
  const r = await tx.raw<{ rows: Array<{ stream_id: string; stream_version: number; type: string; data: Record<string, unknown> }> }>(
    `SELECT e.stream_id, e.stream_version, e.type, e.data
       FROM unnest(?::text[], ?::int[]) AS w(stream_id, before)
       JOIN events e ON e.stream_id = w.stream_id AND e.stream_version < w.before
     ORDER BY e.stream_id, e.stream_version`,
    [wants.map((w) => w.streamId), wants.map((w) => w.before)],
  );
  for (const row of r.rows) {
    const list = out.get(row.stream_id) ?? [];
    list.push({ version: row.stream_version, type: row.type, data: row.data });
    out.set(row.stream_id, list);
  }
  return out;
}

/** Through the store's own API (outside the transaction): a store that is not this database. */
export function historyThroughStore(store: EventStore): StreamHistory {
  return async (_tx, wants) => {
    const lists = await Promise.all(wants.map((w) => (w.before > 1 ? store.readStream(w.streamId, 1, w.before - 1) : [])));
    return new Map(wants.map((w, i) => [w.streamId, lists[i]!.map((e) => ({ version: e.version, type: e.type, data: e.data }))]));
  };
}
