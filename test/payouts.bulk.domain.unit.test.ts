// The payout batch aggregate (domain/payout-batch.ts) as a specification, and the batch's payout
// ids (commands/payouts-bulk.ts batchPayoutId): given these events, when this command, then these events.
import t from 'tap';
import { payoutBatchDecider, type PayoutBatchCreated, type PayoutBatchEvent } from '../domain/payout-batch.ts';
import { InvariantViolation } from '../domain/errors.ts';
import { batchPayoutId } from '../commands/payouts-bulk.ts';
import { deciderSpec } from './helpers/spec.ts';

const BATCH = '9c41e7d2-5a86-4f0b-b3d1-6e2a8f5c7b19';
const MERCHANT = '22222222-2222-4222-8222-222222222222';
const AT = '2026-06-01T10:00:00.000Z';
const batches = deciderSpec(payoutBatchDecider);

const data = (items: PayoutBatchCreated['items']): PayoutBatchCreated => ({ batch_id: BATCH, merchant_id: MERCHANT, items, at: AT });
const items: PayoutBatchCreated['items'] = [
  { reference: 'inv-1', payout_id: batchPayoutId(BATCH, 0), error: null },
  { reference: 'inv-2', payout_id: null, error: { code: 'insufficient_balance', message: 'Insufficient XOF balance' } },
];
const recorded: PayoutBatchEvent = { type: 'payout_batch.created', data: data(items) };

t.test('given nothing, when a batch is recorded, then one payout_batch.created with each item\'s outcome', async (t) => {
  batches.given([]).when({ type: 'RecordBatch', data: data(items) }).then(t, [recorded]);
});

t.test('given the batch, when recorded again (a retry), then nothing', async (t) => {
  batches.given([recorded]).when({ type: 'RecordBatch', data: data(items) }).thenNothing(t);
  t.same(batches.given([recorded]).state, { exists: true, created: recorded.data }, 'the state is the batch as recorded');
});

t.test('a reference or a payout named twice is a broken invariant (the API refuses such a body first)', async (t) => {
  batches.given([]).when({ type: 'RecordBatch', data: data([items[0]!, { ...items[1]!, reference: 'inv-1' }]) }).thenThrows(t, InvariantViolation);
  batches.given([]).when({ type: 'RecordBatch', data: data([items[0]!, { ...items[0]!, reference: 'inv-3' }]) }).thenThrows(t, InvariantViolation);
});

t.test('item payout ids: name-based UUIDs (version 5) of the batch id and the index, the same on every retry', async (t) => {
  const ids = Array.from({ length: 100 }, (_, i) => batchPayoutId(BATCH, i));
  t.equal(new Set(ids).size, 100, 'one per item');
  t.same(ids, Array.from({ length: 100 }, (_, i) => batchPayoutId(BATCH, i)), 'stable');
  for (const id of ids) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.not(batchPayoutId('0b8c2a51-3f7e-4d19-a6c2-9e4f1d7b3a60', 0), ids[0], 'another batch, other ids');
});
