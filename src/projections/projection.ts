import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { RowCache } from './row-cache.ts';

/**
 * A read model built from the global event order. `apply` runs inside the transaction that also
 * moves the projection's checkpoint, so a batch is applied exactly once or not at all.
 */
export interface Projection {
  name: string;
  /** Tables this projection owns; a rebuild empties them. */
  tables: string[];
  /** `rows`: the live projector's cache of the stream rows it wrote (row-cache.ts); never a shadow's. */
  apply(tx: Knex.Transaction, events: RecordedEvent[], rows?: RowCache): Promise<void>;
}
