import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { StreamHistory } from './history.ts';
import type { RowCache } from './row-cache.ts';
import type { InsertNew } from './copy-rows.ts';

/** What a projection may use besides its batch. */
export interface ApplyContext {
  /** A stream's earlier events, for a row whose state is not cached (history.ts). */
  history: StreamHistory;
  /** The stream rows this projector (or this rebuild, on its shadow) last wrote (row-cache.ts). */
  rows?: RowCache;
  /**
   * How to write rows that cannot be in their table yet (a rebuild's shadow on PostgreSQL:
   * copy-rows.ts); without it they are upserted like the others.
   */
  insertNew?: InsertNew;
}

/** A batch's rows, computed: written by calling it inside the batch's transaction. */
export type BatchWrite = (tx: Knex.Transaction) => Promise<void>;

/**
 * A read model built from the global event order. `apply` runs inside the transaction that also
 * moves the projection's checkpoint, so a batch is applied exactly once or not at all. Every event
 * of a batch is after the projection's checkpoint.
 */
export interface Projection {
  name: string;
  /** Tables this projection owns; a rebuild empties them. */
  tables: string[];
  apply(tx: Knex.Transaction, events: RecordedEvent[], ctx: ApplyContext): Promise<void>;
  /**
   * Optional, what `apply` does in two steps: compute the batch's rows (reading, if it must, through
   * `db`, never writing), then write them in the batch's transaction. A rebuild on PostgreSQL
   * computes the next batch while the server writes this one (shadow.ts). The rows cached in
   * `ctx.rows` are the prepared batch's, as if it were written.
   */
  prepare?(db: Knex | Knex.Transaction, events: RecordedEvent[], ctx: ApplyContext): Promise<BatchWrite>;
}
