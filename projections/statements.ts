// Wallet statements: one merchant's movements in one currency over a period, with opening and
// closing balances, from the wallet movements read model (wallet-movements.ts, one row per wallet
// event), the same source and the same boundary as the balances as of a time (wallet-history.ts).
//
// Period: [from, to), by the movement's time `at` (the time the ledger decided it; a wallet's
// movements are in time order along its versions: domain/wallet.ts). Opening = the balances as of
// `from`; each line is one wallet event (a top-up, hold, post, release or credit, or any movement
// the wallet records) with its signed effect on `available` and `reserved` and the balances after
// it; closing = opening + the sum of the lines. `reconciled` checks that sum against the balances
// the ledger states after the last line and as of `to`: the statement of [a, b) closes where the
// statement of [b, c) opens. Read in one snapshot. Amounts are whole francs as decimal strings,
// summed as bigint.
//
// Settled: a movement's `at` is taken by the attempt that commits it, so one that is still being
// decided may commit with an `at` a moment in the past. The caller makes sure the read models have
// every commit before the ask (else 503); the period is then settled when no movement can fall into
// it any more (wallet-history.ts settledBefore): `settled: true` never changes.
import type { Knex } from 'knex';
import { balancesAsOf, MOVEMENT_COLUMNS, settledBefore, type MovementRow } from './wallet-history.ts';

export const MAX_STATEMENT_LINES = 50_000;

export interface Balances {
  available: string;
  reserved: string;
}

export interface StatementLine {
  position: string;
  event_id: string;
  at: string;
  movement: string;
  movement_id: string;
  reference_type: string;
  reference_id: string;
  description: string;
  available_delta: string;
  reserved_delta: string;
  /** Fee the platform took in this movement (0 when none). */
  fee: string;
  /** The other side: `platform:funding`, `provider:<operator>`, or the merchant's own other account. */
  counterparty: string;
  available_balance: string;
  reserved_balance: string;
}

export interface Statement {
  merchant_id: string;
  currency: string;
  from: string;
  to: string;
  opening: Balances;
  closing: Balances;
  totals: { movements: number; available_delta: string; reserved_delta: string; fees: string };
  /** opening + Σ deltas = closing = the balances the ledger states as of `to`, for available and reserved. */
  reconciled: boolean;
  /** No movement can fall into the period any more: the statement no longer changes. */
  settled: boolean;
  lines: StatementLine[];
}

export class StatementTooLong extends Error {}

function describe(movement: string, referenceType: string, referenceId: string, fee: bigint): string {
  const what = referenceType === 'top_up' ? 'top-up' : `${referenceType} ${referenceId}`;
  switch (movement) {
    case 'top_up': return 'Top-up (funding)';
    case 'hold': return `Held for ${what}`;
    case 'post': return `Paid out: ${what}${fee > 0n ? ` (fee ${fee})` : ''}`;
    case 'release': return `Released: ${what}`;
    case 'credit': return `Collected: ${what}${fee > 0n ? ` (fee ${fee})` : ''}`;
    default: return `${movement}: ${what}`;
  }
}

/** `now`: when the statement is asked (default the system clock), for `settled`. */
/**
 * `readModelsAtHead`: the caller saw the read models include every commit before the ask; without
 * it a statement is never said settled (a lagging table may still take movements of the period).
 */
type StatementQuery = { merchantId: string; currency: string; from: Date; to: Date; now?: Date; readModelsAtHead: boolean };

/** The period's movements in the wallet's order. */
async function movementsIn(db: Knex.Transaction, q: StatementQuery): Promise<MovementRow[]> {
  const rows = (await db.raw<{ rows: MovementRow[] }>(
    `SELECT ${MOVEMENT_COLUMNS} FROM wallet_movements
     WHERE merchant_id = ? AND currency = ? AND at >= ? AND at < ?
     ORDER BY at, wallet_version LIMIT ?`,
    [q.merchantId, q.currency, q.from, q.to, MAX_STATEMENT_LINES + 1],
  )).rows;
  if (rows.length > MAX_STATEMENT_LINES) throw new StatementTooLong(`more than ${MAX_STATEMENT_LINES} movements: ask for a shorter period`);
  return rows;
}

const lineOf = (r: MovementRow): StatementLine => ({
  position: r.global_position, event_id: r.event_id, at: new Date(r.at).toISOString(),
  movement: r.movement, movement_id: r.movement_id, reference_type: r.reference_type, reference_id: r.reference_id,
  description: describe(r.movement, r.reference_type, r.reference_id, BigInt(r.fee)),
  available_delta: r.available_delta, reserved_delta: r.reserved_delta, fee: r.fee, counterparty: r.counterparty,
  available_balance: r.available_balance, reserved_balance: r.reserved_balance,
});

export async function buildStatement(knex: Knex, q: StatementQuery): Promise<Statement> {
  const now = q.now ?? new Date();
  const { opening, rows, atTo, settled } = await knex.transaction(async (tx) => ({
    opening: await balancesAsOf(tx, q.merchantId, q.currency, q.from),
    rows: await movementsIn(tx, q),
    atTo: await balancesAsOf(tx, q.merchantId, q.currency, q.to),
    settled: q.readModelsAtHead && await settledBefore(tx, q.merchantId, q.currency, q.to, now),
  }), { isolationLevel: 'repeatable read', readOnly: true });
  let available = BigInt(opening.available);
  let reserved = BigInt(opening.reserved);
  let fees = 0n;
  let statedAgree = true;
  for (const r of rows) {
    available += BigInt(r.available_delta);
    reserved += BigInt(r.reserved_delta);
    fees += BigInt(r.fee);
    statedAgree &&= available === BigInt(r.available_balance) && reserved === BigInt(r.reserved_balance);
  }
  const totalAvailable = available - BigInt(opening.available);
  const totalReserved = reserved - BigInt(opening.reserved);
  const reconciled = statedAgree && available === BigInt(atTo.available) && reserved === BigInt(atTo.reserved);
  return {
    merchant_id: q.merchantId, currency: q.currency, from: q.from.toISOString(), to: q.to.toISOString(),
    opening: { available: opening.available, reserved: opening.reserved },
    closing: { available: available.toString(), reserved: reserved.toString() },
    totals: { movements: rows.length, available_delta: totalAvailable.toString(), reserved_delta: totalReserved.toString(), fees: fees.toString() },
    reconciled, settled, lines: rows.map(lineOf),
  };
}

export const STATEMENT_CSV_COLUMNS = [
  'line_type', 'at', 'position', 'event_id', 'movement', 'movement_id', 'reference_type', 'reference_id', 'description',
  'counterparty', 'available_delta', 'reserved_delta', 'fee', 'available_balance', 'reserved_balance',
] as const;

/** RFC 4180 field; a text cell a spreadsheet would run as a formula is prefixed with `'`. */
function cell(v: string, text: boolean): string {
  const safe = text && /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const NUMERIC = new Set(['position', 'available_delta', 'reserved_delta', 'fee', 'available_balance', 'reserved_balance']);

/**
 * The statement as CSV: a header, an `opening` line (balances at `from`), one `movement` line per
 * wallet event, a `closing` line (balances at `to`, deltas = the period's totals). CRLF line ends.
 */
export function statementCsv(s: Statement): string {
  const row = (values: Partial<Record<typeof STATEMENT_CSV_COLUMNS[number], string>>) =>
    STATEMENT_CSV_COLUMNS.map((c) => cell(values[c] ?? '', !NUMERIC.has(c))).join(',');
  const out = [STATEMENT_CSV_COLUMNS.join(',')];
  out.push(row({
    line_type: 'opening', at: s.from, description: `Opening balance ${s.currency}`,
    available_balance: s.opening.available, reserved_balance: s.opening.reserved,
  }));
  for (const l of s.lines) out.push(row({ line_type: 'movement', ...l }));
  out.push(row({
    line_type: 'closing', at: s.to, description: `Closing balance ${s.currency}`,
    available_delta: s.totals.available_delta, reserved_delta: s.totals.reserved_delta, fee: s.totals.fees,
    available_balance: s.closing.available, reserved_balance: s.closing.reserved,
  }));
  return `${out.join('\r\n')}\r\n`;
}
