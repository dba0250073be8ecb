// Operator command on wallets: sandbox funding (a top-up), recorded as such in the ledger.
import type { Services } from './services.ts';
import * as W from '../domain/wallet.ts';
import { parseAmount } from '../domain/money.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { streams } from './streams.ts';
import { loadMerchant } from './lookups.ts';

export async function topUp(
  s: Services,
  c: { entryId: string; merchantId: string; currency: string; amount: string },
  meta: EventMetadata,
): Promise<{ entryId: string; amount: bigint; at: string }> {
  await loadMerchant(s, c.merchantId);
  const amount = parseAmount(c.amount, 'amount');
  const at = s.clock.now().toISOString();
  const { append } = await s.aggregates.execute(streams.wallet(c.merchantId, c.currency), W.walletDecider, {
    type: 'TopUp', data: { merchantId: c.merchantId, currency: c.currency, at, entryId: c.entryId, amount },
  }, meta);
  await s.awaitReadModels(append?.position);
  return { entryId: c.entryId, amount, at };
}
