// A transfer's events with their effects on the merchant's wallets, as the appends of one atomic
// append: the transfer's events first, then each wallet's. The wallet commands the events call for
// (domain/transfer-wallets.ts) are decided in order, each on its wallet as the previous one
// left it: the payin and payout currencies may be the same wallet stream.
//
// Exactly once (issue 32): the wallet keeps no ids of past credits or closed holds; the transfer's
// stream does the work. Its events are appended at the version they were decided on, every wallet
// command comes from one of them (walletCommands), and the transfer decides each leg's outcome only
// while the leg is pending, its creation at version 0 and a relaunch once per request. A retry, a
// redelivered outcome or a lagging cache thus decides nothing, or conflicts and decides again.
import type * as T from '../domain/transfer.ts';
import { walletCommands } from '../domain/transfer-wallets.ts';
import * as W from '../domain/wallet.ts';
import type { EventMetadata, StreamAppend } from '../infra/eventstore/types.ts';
import { toNew, type AttemptLoader, type Loaded } from './aggregates.ts';
import { streams } from './streams.ts';

export async function withWalletEffects(
  tx: AttemptLoader,
  transfer: Loaded<T.TransferState>,
  events: T.TransferEvent[],
  meta: EventMetadata,
): Promise<StreamAppend[]> {
  const wallets = new Map<string, { version: number; state: W.WalletState; events: W.WalletEvent[] }>();
  for (const command of walletCommands(transfer.state, events)) {
    const streamId = streams.wallet(command.data.merchantId, command.data.currency);
    let wallet = wallets.get(streamId);
    if (!wallet) {
      const loaded = await tx.load(streamId, W.walletDecider);
      wallet = { version: loaded.version, state: loaded.state, events: [] };
      wallets.set(streamId, wallet);
    }
    const decided = W.walletDecider.decide(command, wallet.state);
    wallet.events.push(...decided);
    wallet.state = decided.reduce(W.walletDecider.evolve, wallet.state);
  }
  return [
    { streamId: transfer.streamId, expectedVersion: transfer.version, events: toNew(events, meta) },
    ...[...wallets].map(([streamId, w]) => ({ streamId, expectedVersion: w.version, events: toNew(w.events, meta) })),
  ];
}
