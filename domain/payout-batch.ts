// A bulk payout request (CONTRACT §10, stream `payout_batch-<id>`): one `payout_batch.created`
// event recording what each item came to, appended in the same atomic append as the payouts it
// created (commands/payouts-bulk.ts). So a batch exists exactly when its payouts do: a crash leaves
// both or neither, and GET /payouts/bulk/{id} (its read model rebuilt from this event) always
// names every payout of the batch. It moves no money: the payouts and their wallet holds do.
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { invariant, type ErrorCode, type ErrorDetail } from './errors.ts';

/** What one item came to: the payout it created, or the refusal its own POST /payouts would have got. */
export interface PayoutBatchItem {
  reference: string;
  payout_id: string | null;
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] } | null;
}

export interface PayoutBatchCreated {
  batch_id: string;
  merchant_id: string;
  items: PayoutBatchItem[];
  at: string;
}

export type PayoutBatchEvent = DomainEvent<'payout_batch.created', PayoutBatchCreated>;

export interface PayoutBatchState {
  exists: boolean;
  created: PayoutBatchCreated | null;
}

/** The one thing that may be asked: record the batch as decided (a plain value; ids and time in it). */
export type PayoutBatchCommand = { type: 'RecordBatch'; data: PayoutBatchCreated };

export const payoutBatchDecider = {
  initialState: (): PayoutBatchState => ({ exists: false, created: null }),
  evolve(s: PayoutBatchState, e: PayoutBatchEvent): PayoutBatchState {
    switch (e.type) {
      case 'payout_batch.created':
        return { exists: true, created: e.data };
      default:
        return unreachable(e.type);
    }
  },
  decide(command: PayoutBatchCommand, s: PayoutBatchState): PayoutBatchEvent[] {
    switch (command.type) {
      case 'RecordBatch': {
        // A batch id names one request: recorded once, a retry adds nothing.
        if (s.exists) return [];
        const c = command.data;
        const payouts = c.items.flatMap((i) => (i.payout_id ? [i.payout_id] : []));
        invariant(new Set(c.items.map((i) => i.reference)).size === c.items.length && new Set(payouts).size === payouts.length,
          'a batch names each reference and each payout once');
        return [{ type: 'payout_batch.created', data: c }];
      }
      default:
        return unreachable(command.type);
    }
  },
} satisfies CommandDecider<PayoutBatchState, PayoutBatchEvent, PayoutBatchCommand>;
