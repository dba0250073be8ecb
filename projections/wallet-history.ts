// A wallet's past, from the wallet movements read model (wallet-movements.ts): its balances as of
// any instant, and its movements newest first (CONTRACT.md §13).
//
// The boundary, the same everywhere (statements.ts too): a movement counts before T when its `at`
// is before T (`at < T`). A wallet's movements are in time order along its versions
// (domain/wallet.ts), so the balances as of T are the balances stated by its last movement before
// T: one probe of the (merchant_id, currency, at DESC, wallet_version DESC) index, whatever the
// history's length.
import { SETTLE_MS } from '../domain/wallet.ts';
import type { Knex } from 'knex';
import { cursorPair, DEFAULT_LIMIT, invalidCursor, MAX_LIMIT, type ListRequest, type Page } from './pagination.ts';

export interface Balances {
  available: string;
  reserved: string;
}

/** The balances as of `at` and the time of the movement that left them (null: none before `at`). */
export interface BalancesAsOf extends Balances {
  since: string | null;
}

type Db = Knex | Knex.Transaction;

export async function balancesAsOf(db: Db, merchantId: string, currency: string, at: Date): Promise<BalancesAsOf> {
  const row = (await db.raw<{ rows: Array<{ available: string; reserved: string; at: Date }> }>(
    `SELECT available_balance::text AS available, reserved_balance::text AS reserved, at
     FROM wallet_movements WHERE merchant_id = ? AND currency = ? AND at < ?
     ORDER BY at DESC, wallet_version DESC LIMIT 1`,
    [merchantId, currency, at],
  )).rows[0];
  return row ? { available: row.available, reserved: row.reserved, since: new Date(row.at).toISOString() } : { available: '0', reserved: '0', since: null };
}

/**
 * Whether the wallet's movements before `t` are final, the read models being at every commit
 * (CONTRACT §17): a wallet's movements are in time order along its versions (domain/wallet.ts), so
 * once it has a movement at or after `t`, none can come before `t` any more; a wallet idle since
 * before `t` is final once `t` is SETTLE_MS old (no decision commits later than that after its time).
 */
export async function settledBefore(db: Db, merchantId: string, currency: string, t: Date, now: Date): Promise<boolean> {
  if (t.getTime() <= now.getTime() - SETTLE_MS) return true;
  const later = await db.raw<{ rows: unknown[] }>(
    'SELECT 1 FROM wallet_movements WHERE merchant_id = ? AND currency = ? AND at >= ? LIMIT 1',
    [merchantId, currency, t],
  );
  return later.rows.length > 0;
}

/** One movement as the merchant API renders it. */
export interface WalletTransaction {
  id: string;
  at: string;
  movement: string;
  reference: { type: string; id: string };
  available_delta: string;
  reserved_delta: string;
  fee: string;
  available_balance: string;
  reserved_balance: string;
}

/** A movement row with every column as text (numbers exact). */
export interface MovementRow {
  wallet_version: number;
  event_id: string;
  global_position: string;
  at: Date | string;
  movement: string;
  movement_id: string;
  reference_type: string;
  reference_id: string;
  counterparty: string;
  available_delta: string;
  reserved_delta: string;
  fee: string;
  available_balance: string;
  reserved_balance: string;
  /** Only where selected (the list's cursor). */
  at_text?: string;
}

export const MOVEMENT_COLUMNS = `wallet_version, event_id, global_position::text AS global_position, at, movement, movement_id,
  reference_type, reference_id, counterparty, available_delta::text AS available_delta, reserved_delta::text AS reserved_delta,
  fee::text AS fee, available_balance::text AS available_balance, reserved_balance::text AS reserved_balance`;

const transactionOf = (r: MovementRow): WalletTransaction => ({
  id: r.event_id, at: new Date(r.at).toISOString(), movement: r.movement, reference: { type: r.reference_type, id: r.reference_id },
  available_delta: r.available_delta, reserved_delta: r.reserved_delta, fee: r.fee,
  available_balance: r.available_balance, reserved_balance: r.reserved_balance,
});

// The cursor names the page's last movement by its place in the (at, wallet_version) order: the next
// page is what came before it. `at` as PostgreSQL prints it (microseconds), so nothing is rounded.
const encodeCursor = (r: MovementRow) => Buffer.from(JSON.stringify([r.at_text, r.wallet_version]), 'utf8').toString('base64url');

function decodeCursor(cursor: string): [string, number] {
  const invalid = invalidCursor;
  const [at, version] = cursorPair(cursor, 120);
  if (typeof at !== 'string' || !/^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]{8,15}[+-][0-9]{2}(:[0-9]{2})?$/.test(at)) throw invalid();
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) throw invalid();
  return [at, version];
}

/**
 * The wallet's movements newest first (§8 list: limit, cursor, created_from/created_to on `at`,
 * inclusive), in (at, wallet_version) order, which is the wallet's own order: a range of the as-of index.
 */
export async function walletTransactions(knex: Knex, merchantId: string, currency: string, list: ListRequest): Promise<Page<WalletTransaction>> {
  const limit = Math.min(Math.max(Math.trunc(list.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT);
  const q = knex('wallet_movements').select(knex.raw(`${MOVEMENT_COLUMNS}, at::text AS at_text`)).where({ merchant_id: merchantId, currency });
  if (list.createdFrom !== undefined) q.where('at', '>=', list.createdFrom);
  if (list.createdTo !== undefined) q.where('at', '<=', list.createdTo);
  if (list.cursor !== undefined) q.whereRaw('(at, wallet_version) < (?::timestamptz, ?)', decodeCursor(list.cursor));
  const rows = (await q.orderBy([{ column: 'at', order: 'desc' }, { column: 'wallet_version', order: 'desc' }]).limit(limit + 1)) as MovementRow[];
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { data: page.map(transactionOf), has_more: hasMore, next_cursor: hasMore ? encodeCursor(page.at(-1)!) : null };
}
