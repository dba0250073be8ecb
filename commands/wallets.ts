// Operator command on wallets: sandbox funding (a top-up), recorded as such in the ledger. Each
// top-up has its own stream (`topup-<id>`, domain/top-up.ts) appended with the wallet's credit in
// one atomic append at expected version 0: that stream, not the wallet, makes it happen once.
import { createHash, randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import * as W from '../domain/wallet.ts';
import { topUpDecider } from '../domain/top-up.ts';
import { parseAmount } from '../domain/money.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { loadMerchant } from './lookups.ts';

export interface TopUp {
  merchantId: string;
  currency: string;
  amount: string;
  /** The operator's Idempotency-Key: the same key on the same merchant names the same top-up. */
  idempotencyKey: string | undefined;
}

export interface ToppedUp {
  entryId: string;
  currency: string;
  amount: bigint;
  at: string;
  /** An earlier request with the same key recorded it: this one answers it and moves nothing. */
  replayed: boolean;
}

/**
 * The top-up a key names, scoped to the merchant as every Idempotency-Key is (CONTRACT.md §6): a
 * name-based UUID (version 8: SHA-256 of the merchant and the key), so a retry in any process, after
 * any crash, lands on the same stream and its expected version 0 lets one attempt record it. Not
 * the claims table of api/middleware/idempotency.ts: its keys are the authenticated merchant's, an
 * operator call has none, and the stream guarantees once on every event store without it.
 */
export function topUpIdFor(merchantId: string, key: string): string {
  const h = createHash('sha256').update(`top-up\n${merchantId}\n${key}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export async function topUp(s: Services, c: TopUp, meta: EventMetadata): Promise<ToppedUp> {
  await loadMerchant(s, c.merchantId);
  const amount = parseAmount(c.amount, 'amount');
  const entryId = c.idempotencyKey === undefined ? randomUUID() : topUpIdFor(c.merchantId, c.idempotencyKey);
  const topUpStream = streams.topUp(entryId);
  const walletStream = streams.wallet(c.merchantId, c.currency);
  // A random id was drawn just now: no stream can have it (the expected version 0 still guards).
  if (c.idempotencyKey === undefined) s.aggregates.assumeNew(topUpStream, topUpDecider);
  const { result, append } = await s.aggregates.transact([topUpStream, walletStream], async (tx) => {
    const at = s.clock.now().toISOString();
    const entry = await tx.load(topUpStream, topUpDecider);
    const recorded = topUpDecider.decide({
      type: 'RecordTopUp',
      data: { topUpId: entryId, merchantId: c.merchantId, currency: c.currency, amount, idempotencyKey: c.idempotencyKey ?? null, at },
    }, entry.state);
    const was = entry.state.recorded;
    if (recorded.length === 0 && was) {
      return { appends: [], result: { entryId, currency: was.currency, amount: BigInt(was.amount), at: was.at, replayed: true } };
    }
    const wallet = await tx.load(walletStream, W.walletDecider);
    const credited = W.topUp(wallet.state, { merchantId: c.merchantId, currency: c.currency, at, entryId, amount });
    return {
      appends: [
        { streamId: topUpStream, expectedVersion: entry.version, events: toNew(recorded, meta) },
        { streamId: walletStream, expectedVersion: wallet.version, events: toNew(credited, meta) },
      ],
      result: { entryId, currency: c.currency, amount, at, replayed: false },
    };
  });
  // A replay answers only once the read models hold what the first request committed.
  await s.awaitReadModels(append ? append.position : await s.store.head());
  return result;
}
