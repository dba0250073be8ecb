// The streams (id → version and events) whose rows a projector last wrote, so its next batch folds
// the new events onto them without reading the stream's earlier events from the store (history.ts;
// bench issue 8: a read per table per batch, about three per transfer). Valid only while nobody else moved the projection: every writer of its tables takes
// the projection's checkpoint lock and moves the checkpoint, so a checkpoint found (under that lock)
// where this cache left it means the rows are still the ones written here; anything else (another
// process's batch, a rebuild's swap, a failed transaction) empties it. Rows are a pure function of
// the events, so a row equal to what is cached is as good as the table's.
export interface CachedRow {
  version: number;
  events: unknown[];
}

/**
 * At most this many rows per projection. The streams in flight: a payin's row is written when it is
 * created and again when its provider settles it (the sandbox: 2 s later). At 1,000 quote + payin
 * pairs a second that is 4,000 rows written in between; 2,000 dropped every payin before its
 * settlement, and each batch read those streams back (bench issue 8). A row is its stream's
 * events: with 10,000 the bench's peak RSS did not move (219 to 221 MB on PostgreSQL).
 */
export const ROW_CACHE_LIMIT = 10_000;

export class RowCache {
  private rows = new Map<string, CachedRow>();
  private pending = new Map<string, CachedRow>();
  /** The checkpoint the rows are valid at (undefined: nothing is). */
  private validAt: bigint | undefined;

  constructor(private readonly limit = ROW_CACHE_LIMIT) {}

  /** Under the checkpoint lock, before a batch: keeps the rows only if the checkpoint is where they were written. */
  begin(checkpoint: bigint): void {
    if (this.validAt !== checkpoint) this.rows.clear();
    this.pending.clear();
  }

  get(table: string, id: string): CachedRow | undefined {
    return this.pending.get(`${table}/${id}`) ?? this.rows.get(`${table}/${id}`);
  }

  /** A row this batch writes (kept once the batch commits). */
  put(table: string, id: string, row: CachedRow): void {
    this.pending.set(`${table}/${id}`, row);
  }

  /** The batch committed with the checkpoint at `checkpoint`. */
  commit(checkpoint: bigint): void {
    for (const [k, row] of this.pending) {
      this.rows.delete(k); // re-inserted: the most recently written go last, the oldest are dropped first
      this.rows.set(k, row);
    }
    this.pending.clear();
    // The oldest go, through one iterator: a fresh keys() per deletion walks past every entry
    // deleted before it (a Map keeps their slots until it rehashes), quadratic in a rebuild's batch.
    let excess = this.rows.size - this.limit;
    if (excess > 0) {
      for (const k of this.rows.keys()) {
        this.rows.delete(k);
        if (--excess === 0) break;
      }
    }
    this.validAt = checkpoint;
  }

  /** The batch failed (or the checkpoint is unknown): nothing cached can be trusted. */
  reset(): void {
    this.rows.clear();
    this.pending.clear();
    this.validAt = undefined;
  }
}
