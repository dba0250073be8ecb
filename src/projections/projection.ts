import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';

/**
 * A read model built from the global event order. `apply` runs inside the transaction that also
 * moves the projection's checkpoint, so a batch is applied exactly once or not at all.
 */
export interface Projection {
  name: string;
  /** Tables this projection owns; a rebuild empties them. */
  tables: string[];
  apply(tx: Knex.Transaction, events: RecordedEvent[]): Promise<void>;
}
