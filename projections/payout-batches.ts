// Read model of bulk payouts (CONTRACT §10): one row per batch, its `payout_batch.created` data,
// what GET /payouts/bulk/{id} reads (the payouts' current statuses come from `payouts`). A batch
// is recorded once and never changes, so a row is inserted once (a replayed batch is ignored).
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { PayoutBatchEvent } from '../domain/payout-batch.ts';
import { unreachable } from '../domain/decider.ts';
import type { BatchWrite, Projection } from './projection.ts';
import { upsertRows } from './upsert.ts';

const PREFIX = 'payout_batch-';

function rowsOf(events: RecordedEvent[]): Array<Record<string, unknown>> {
  return events.filter((r) => r.streamId.startsWith(PREFIX)).map((r) => {
    const e = { type: r.type, data: r.data } as unknown as PayoutBatchEvent;
    switch (e.type) {
      case 'payout_batch.created':
        return { id: e.data.batch_id, merchant_id: e.data.merchant_id, created_at: e.data.at, body: e.data };
      default:
        return unreachable(e.type);
    }
  });
}

async function prepare(_db: unknown, events: RecordedEvent[]): Promise<BatchWrite> {
  const rows = rowsOf(events);
  return (tx) => upsertRows(tx, 'payout_batches', ['id'], rows, 'ignore');
}

export const payoutBatchesProjection: Projection = {
  name: 'payout_batches',
  tables: ['payout_batches'],
  prepare,
  async apply(tx, events) {
    await (await prepare(tx, events))(tx);
  },
};
