// The wallet movements read model (CONTRACT.md §13): one row per wallet event, keyed by the wallet
// and its version, with the event's effect on the merchant's available and reserved accounts, the
// fee the platform took, the other side of the movement, and the balances right after it as the
// wallet's decider stated them (never recomputed here: the stream's order is the ledger's).
//
// Balances as of a time, the wallet's transactions and statements all read this table
// (wallet-history.ts, statements.ts), so they agree by construction. Movement kinds are the money
// projection's (money.ts movementOf); any kind is carried as it is named.
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import { accounts, type Posting, type WalletEvent } from '../domain/wallet.ts';
import { movementOf } from './money.ts';
import type { ApplyContext, BatchWrite, Projection } from './projection.ts';
import { upsertRows } from './upsert.ts';

const TABLE = 'wallet_movements';

const signed = (p: Posting) => (p.side === 'credit' ? BigInt(p.amount) : -BigInt(p.amount));

/** One wallet event's effect on the merchant's accounts: the deltas, the fee and the other side. */
function effectOf(merchantId: string, postings: Posting[]) {
  const own = { available: accounts.available(merchantId), reserved: accounts.reserved(merchantId) };
  let available = 0n;
  let reserved = 0n;
  let fee = 0n;
  const others: string[] = [];
  for (const p of postings) {
    if (p.account === own.available) available += signed(p);
    else if (p.account === own.reserved) reserved += signed(p);
    else if (p.account === accounts.fees) fee += BigInt(p.amount);
    else others.push(p.account);
  }
  // A hold or a release moves money between the merchant's own two accounts: the other is the other side.
  const counterparty = others[0] ?? (available !== 0n && reserved !== 0n ? (available < 0n ? own.reserved : own.available) : '');
  return { available, reserved, fee, counterparty };
}

function rowOf(r: RecordedEvent): Record<string, unknown> {
  const e = { type: r.type, data: r.data } as unknown as WalletEvent;
  const d = e.data;
  const kind = movementOf(e);
  const effect = effectOf(d.merchant_id, d.postings);
  return {
    merchant_id: d.merchant_id, currency: d.currency, wallet_version: r.version, event_id: r.id,
    global_position: r.position.toString(), at: d.at, movement: kind.movement, movement_id: kind.id,
    reference_type: d.reference.type, reference_id: d.reference.id, counterparty: effect.counterparty,
    available_delta: effect.available.toString(), reserved_delta: effect.reserved.toString(), fee: effect.fee.toString(),
    available_balance: d.balances.available, reserved_balance: d.balances.reserved,
  };
}

/** The batch's wallet events as rows; each is written once (a replayed one is ignored). */
async function prepare(_db: unknown, events: RecordedEvent[], ctx: ApplyContext): Promise<BatchWrite> {
  const rows = events.filter((r) => r.streamId.startsWith('wallet-')).map(rowOf);
  return async (tx) => {
    if (rows.length === 0) return;
    if (ctx.insertNew) await ctx.insertNew(tx, TABLE, rows);
    else await upsertRows(tx, TABLE, ['merchant_id', 'currency', 'wallet_version'], rows, 'ignore');
  };
}

export const walletMovementsProjection: Projection = {
  name: 'wallet_movements',
  tables: [TABLE],
  async apply(tx, events, ctx) {
    await (await prepare(tx, events, ctx))(tx);
  },
  prepare,
};
