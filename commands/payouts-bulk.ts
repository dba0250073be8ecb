// POST /payouts/bulk (CONTRACT §10): up to 100 payouts in one request, each decided exactly as its
// own POST /payouts would be, with the same functions (commands/payouts.ts planPayout,
// decidePayouts): its own quote consumed, KYC gate, operator availability, wallet hold. One item's
// refusal never stops another.
//
// Set-wise: the items are planned at once (customer and quote reads in parallel), then decided in
// one `transact` (the holds on one wallet in order on the wallet as the previous left it) and
// appended in ONE atomic append together with the batch's own record (domain/payout-batch.ts):
// one request, one append, not 100 round trips.
//
// Exactly once: each item's payout id is derived from the batch's id (the idempotency claim's
// resource id, stable across retries) and the item's index, and the batch and its payouts commit
// together. A retry after a crash or an in-doubt commit finds the batch (and so every payout it
// created: answered as a replay) or nothing at all (each item decided afresh, none paid twice).
import { createHash } from 'node:crypto';
import type { Services } from './services.ts';
import * as P from '../domain/payout.ts';
import { payoutBatchDecider, type PayoutBatchCreated, type PayoutBatchItem } from '../domain/payout-batch.ts';
import { DomainError } from '../domain/errors.ts';
import type { Recipient } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { createdEarlier } from './created.ts';
import { decidePayouts, payoutLockKeys, planPayout, type CreatePayout, type PayoutAnswer, type PlannedPayout } from './payouts.ts';

export interface BulkPayoutItem {
  reference: string;
  customerId: string;
  quoteId: string;
  recipient: Recipient;
  paymentReasonText: string;
  metadata: Record<string, string>;
}

export interface CreatePayoutBatch {
  batchId: string;
  merchantId: string;
  items: BulkPayoutItem[];
  /** The id was drawn by this request's idempotency claim: neither the batch nor its payouts exist yet. */
  fresh?: boolean;
}

export interface PayoutBatch {
  batch: PayoutBatchCreated;
  /** The payouts the batch created, by id, as they are now. */
  payouts: Map<string, P.PayoutState>;
  /** An earlier attempt under the same claim had recorded it: answered as a replay. */
  existed: boolean;
}

/** Item `index`'s payout id: a name-based UUID (version 5) of the batch id, the same on every retry. */
export function batchPayoutId(batchId: string, index: number): string {
  const h = createHash('sha1').update(Buffer.from(batchId.replace(/-/g, ''), 'hex')).update(`payout:${index}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export async function createPayoutBatch(s: Services, c: CreatePayoutBatch, meta: EventMetadata): Promise<PayoutBatch> {
  const batchStream = streams.payoutBatch(c.batchId);
  const earlier = await createdEarlier(s.aggregates, batchStream, payoutBatchDecider, c.fresh);
  if (earlier) return { batch: earlier.state.created!, payouts: await payoutsOf(s, earlier.state.created!), existed: true };
  const creates = c.items.map((item, i): CreatePayout => ({ ...item, payoutId: batchPayoutId(c.batchId, i), merchantId: c.merchantId }));
  // No batch, so none of its payouts either (they commit together): nothing to read for them.
  for (const x of creates) s.aggregates.assumeNew(streams.payout(x.payoutId), P.payoutDecider);
  const planned = await Promise.allSettled(creates.map((x) => planPayout(s, x)));
  for (const p of planned) if (p.status === 'rejected' && !(p.reason instanceof DomainError)) throw p.reason; // not a refusal: a 5xx, nothing stored
  const plans = planned.flatMap((p) => (p.status === 'fulfilled' ? [p.value] : []));
  const { result, append } = await s.aggregates.transact([batchStream, ...payoutLockKeys(plans)], async (tx) => {
    const recorded = await tx.load(batchStream, payoutBatchDecider);
    if (recorded.state.exists) return { appends: [], result: { batch: recorded.state.created!, payouts: new Map(), existed: true } };
    const set = await decidePayouts(s, tx, plans, meta);
    const answers = answersOf(planned, plans, set.answers);
    const batch: PayoutBatchCreated = {
      batch_id: c.batchId, merchant_id: c.merchantId, at: s.clock.now().toISOString(),
      items: c.items.map((item, i) => itemOf(item.reference, answers[i]!)),
    };
    const events = payoutBatchDecider.decide({ type: 'RecordBatch', data: batch }, recorded.state);
    const payouts = new Map(answers.flatMap((a) => (a.ok ? [[a.created.state.created!.payout_id, a.created.state] as const] : [])));
    return {
      appends: [...set.appends, { streamId: batchStream, expectedVersion: recorded.version, events: toNew(events, meta) }],
      result: { batch, payouts, existed: false },
      refusedSome: answers.some((a) => !a.ok),
    };
  });
  await s.awaitReadModels(append?.position);
  return result.existed && result.payouts.size === 0 ? { ...result, payouts: await payoutsOf(s, result.batch) } : result;
}

/** Each item's answer, in the batch's order: refused when planned (no customer, no quote) or as decided. */
function answersOf(planned: Array<PromiseSettledResult<PlannedPayout>>, plans: PlannedPayout[], decided: PayoutAnswer[]): PayoutAnswer[] {
  const byId = new Map(plans.map((p, i) => [p.c.payoutId, decided[i]!]));
  return planned.map((p) => {
    return p.status === 'fulfilled' ? byId.get(p.value.c.payoutId)! : { ok: false, error: p.reason as DomainError };
  });
}

function itemOf(reference: string, a: PayoutAnswer): PayoutBatchItem {
  if (a.ok) return { reference, payout_id: a.created.state.created!.payout_id, error: null };
  const { code, message, details } = a.error;
  return { reference, payout_id: null, error: details && details.length > 0 ? { code, message, details } : { code, message } };
}

/** The batch's payouts as they are in the event store now. */
async function payoutsOf(s: Services, batch: PayoutBatchCreated): Promise<Map<string, P.PayoutState>> {
  const ids = batch.items.flatMap((i) => (i.payout_id ? [i.payout_id] : []));
  const states = await Promise.all(ids.map(async (id) => [id, (await s.aggregates.load(streams.payout(id), P.payoutDecider)).state] as const));
  return new Map(states);
}
