// Operator command on wallets: sandbox funding (a top-up), recorded as such in the ledger.
import type { Services } from './services.ts';
import * as W from '../domain/wallet.ts';
import { checkAmountRange, parseAmount } from '../domain/money.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { loadMerchant } from './lookups.ts';

export async function topUp(
  s: Services,
  c: { entryId: string; merchantId: string; currency: string; amount: string },
  meta: EventMetadata,
): Promise<{ entryId: string; amount: bigint; at: string }> {
  await loadMerchant(s, c.merchantId);
  const amount = parseAmount(c.amount, 'amount');
  checkAmountRange(amount, 'amount');
  const streamId = streams.wallet(c.merchantId, c.currency);
  const at = s.clock.now().toISOString();
  const { append } = await s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, W.walletDecider);
    const events = W.topUp(loaded.state, { merchantId: c.merchantId, currency: c.currency, at, entryId: c.entryId, amount });
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: undefined };
  });
  await s.awaitReadModels(append?.position);
  return { entryId: c.entryId, amount, at };
}
