// Payment outcomes that move a merchant's wallet (a payin's credit, a payout's hold posted or
// released), decided together per wallet (per-key-batcher.ts). Commands on one wallet take turns,
// so one at a time they bound a merchant's settlement rate at one append round trip each, and the
// status checks queue behind the wallet (bench issue 8). Here the outcomes waiting for one wallet
// are decided in order, each on the wallet as the previous one left it, and appended at once; each
// payment's events and its wallet's stay in the same atomic append, as alone.
//
// Exactly once (issue 32): the wallet keeps no ids of past credits or closed holds, so what makes
// an outcome move money once is the payment's stream, appended with its expected version beside
// the wallet's events. A payment decides Settle only while pending; two outcomes for one payment
// never share a batch (per-key-batcher.ts), so the later one is decided on the state the earlier
// committed and decides nothing; a lagging cached payment fails its append on the expected version
// and is decided again on a fresh read; a batch whose commit is in doubt is settled again one by
// one on fresh reads. Hence the rule checked below: no wallet event without the payment's own.
import type { Services } from './services.ts';
import * as W from '../domain/wallet.ts';
import type { Decider, DomainEvent } from '../domain/decider.ts';
import type { EventMetadata, StreamAppend } from '../infra/eventstore/types.ts';
import { invariant } from '../domain/errors.ts';
import { toNew } from './aggregates.ts';
import { PerKeyBatcher } from './per-key-batcher.ts';

/** One payment's outcome, waiting for its turn on its merchant's wallet. */
export interface WalletSettlement {
  /** The payment's stream. */
  streamId: string;
  decider: Decider<unknown, DomainEvent>;
  /** The payment's events and the wallet's for this outcome, on the states as they are now. */
  decide(payment: unknown, wallet: W.WalletState, at: string): { events: DomainEvent[]; wallet: W.WalletEvent[] };
  meta: EventMetadata;
}

/** A settlement of a payment of type S (the type is checked here, erased in the batch). */
export function walletSettlement<S, E extends DomainEvent>(x: {
  streamId: string;
  decider: Decider<S, E>;
  decide(payment: S, wallet: W.WalletState, at: string): { events: E[]; wallet: W.WalletEvent[] };
  meta: EventMetadata;
}): WalletSettlement {
  return x as unknown as WalletSettlement;
}

/**
 * Settles the payment in its turn on `walletStream`: the append's position if it wrote any of the
 * payment's events or the wallet's for it, undefined if there was nothing to do (settled already).
 */
export function settleOnWallet(s: Services, walletStream: string, item: WalletSettlement): Promise<bigint | undefined> {
  return batcherOf(s).submit(walletStream, item);
}

const batchers = new WeakMap<Services, PerKeyBatcher<WalletSettlement, bigint | undefined>>();

function batcherOf(s: Services): PerKeyBatcher<WalletSettlement, bigint | undefined> {
  let b = batchers.get(s);
  if (!b) {
    b = new PerKeyBatcher((walletStream, items) => settleTogether(s, walletStream, items), (x) => x.streamId);
    batchers.set(s, b);
  }
  return b;
}

async function settleTogether(s: Services, walletStream: string, items: WalletSettlement[]): Promise<Array<PromiseSettledResult<bigint | undefined>>> {
  if (items.length > 1) {
    try {
      return (await settleBatch(s, walletStream, items)).map((value) => ({ status: 'fulfilled', value }));
    } catch (err) {
      // One payment may be what failed the batch: each on its own, so that it fails alone. Nothing
      // of a failed batch stands, or, in doubt (a lost connection), each is decided on a fresh read.
      s.log.warn({ err, payments: items.length }, 'a batch of wallet settlements failed; settling them one by one');
    }
  }
  const answers: Array<PromiseSettledResult<bigint | undefined>> = [];
  for (const item of items) {
    try {
      answers.push({ status: 'fulfilled', value: (await settleBatch(s, walletStream, [item]))[0] });
    } catch (reason) {
      answers.push({ status: 'rejected', reason });
    }
  }
  return answers;
}

/** One append: each payment's events, and its wallet's decided in order on the wallet as it goes. */
async function settleBatch(s: Services, walletStream: string, items: WalletSettlement[]): Promise<Array<bigint | undefined>> {
  const { result, append } = await s.aggregates.transact([walletStream, ...items.map((x) => x.streamId)], async (tx) => {
    const at = s.clock.now().toISOString();
    const wallet = await tx.load(walletStream, W.walletDecider);
    const payments = await Promise.all(items.map((x) => tx.load(x.streamId, x.decider)));
    let walletState = wallet.state;
    const walletEvents: ReturnType<typeof toNew> = [];
    const appends: StreamAppend[] = [];
    const wrote: boolean[] = [];
    items.forEach((item, i) => {
      const payment = payments[i]!;
      const decided = item.decide(payment.state, walletState, at);
      invariant(decided.wallet.length === 0 || decided.events.length > 0, `${item.streamId}: a wallet movement without the payment's events`);
      walletState = decided.wallet.reduce(W.walletDecider.evolve, walletState);
      walletEvents.push(...toNew(decided.wallet, item.meta));
      appends.push({ streamId: item.streamId, expectedVersion: payment.version, events: toNew(decided.events, item.meta) });
      wrote.push(decided.events.length + decided.wallet.length > 0);
    });
    // Each payment's events before its wallet's in the global order, as when they went one by one.
    appends.push({ streamId: walletStream, expectedVersion: wallet.version, events: walletEvents });
    return { appends, result: wrote };
  });
  return result.map((w) => (w ? append?.position : undefined));
}
