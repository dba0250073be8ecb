// Wallet statements: one merchant's movements in one currency over a period, with opening and
// closing balances, from the `ledger_entries` read model (one row per posting).
//
// Period: [from, to), by the movement's time (`created_at` of the entry, the time the ledger
// decided it). Opening = every posting on the merchant's accounts before `from`; each line is one
// wallet event (a top-up, hold, post, release or credit) with its signed effect on `available` and
// `reserved` and the balances after it; closing = opening + the sum of the lines, which the
// statement states and checks (`reconciled`). Amounts are whole francs as decimal strings, summed as
// bigint.
import type { Knex } from 'knex';
import { accounts } from '../domain/wallet.ts';

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
  /** opening + Σ deltas = closing, for available and reserved. */
  reconciled: boolean;
  lines: StatementLine[];
}

export class StatementTooLong extends Error {}

interface EntryRow {
  event_id: string;
  global_position: string;
  movement: string;
  movement_id: string;
  reference_type: string;
  reference_id: string;
  account: string;
  side: 'debit' | 'credit';
  amount: string;
  created_at: Date | string;
}

const signed = (r: { side: string; amount: string }) => (r.side === 'credit' ? BigInt(r.amount) : -BigInt(r.amount));

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

type StatementQuery = { merchantId: string; currency: string; from: Date; to: Date };

/** The merchant's available and reserved accounts in the ledger. */
const accountsOf = (merchantId: string) => ({ available: accounts.available(merchantId), reserved: accounts.reserved(merchantId) });

/** Every posting on the merchant's two accounts before `from`, summed per account. */
async function openingOf(knex: Knex, q: StatementQuery): Promise<{ available: bigint; reserved: bigint }> {
  const own = accountsOf(q.merchantId);
  const opening = await knex.raw<{ rows: Array<{ account: string; balance: string | null }> }>(
    `SELECT account, sum(CASE WHEN side = 'credit' THEN amount ELSE -amount END)::text AS balance
     FROM ledger_entries WHERE merchant_id = ? AND currency = ? AND created_at < ? AND account IN (?, ?)
     GROUP BY account`,
    [q.merchantId, q.currency, q.from, own.available, own.reserved],
  );
  const balanceOf = (account: string) => BigInt(opening.rows.find((r) => r.account === account)?.balance ?? '0');
  return { available: balanceOf(own.available), reserved: balanceOf(own.reserved) };
}

/** The period's postings, grouped by event in global order. */
async function postingsByEvent(knex: Knex, q: StatementQuery): Promise<Map<string, EntryRow[]>> {
  // Every posting of every event with a posting in the period (an event's postings share its time).
  // Ordered by the bigint column, not by the text alias of the select list.
  const rows = (await knex.raw<{ rows: EntryRow[] }>(
    `SELECT event_id, global_position::text AS global_position, movement, movement_id, reference_type, reference_id,
            account, side, amount::text AS amount, created_at
     FROM ledger_entries
     WHERE merchant_id = ? AND currency = ? AND created_at >= ? AND created_at < ?
     ORDER BY ledger_entries.global_position, posting_index
     LIMIT ?`,
    [q.merchantId, q.currency, q.from, q.to, MAX_STATEMENT_LINES * 4 + 1],
  )).rows;
  if (rows.length > MAX_STATEMENT_LINES * 4) throw new StatementTooLong(`more than ${MAX_STATEMENT_LINES} movements: ask for a shorter period`);
  const byEvent = new Map<string, EntryRow[]>();
  for (const r of rows) {
    const list = byEvent.get(r.event_id) ?? [];
    list.push(r);
    byEvent.set(r.event_id, list);
  }
  return byEvent;
}

/** One wallet event's effect on the merchant's accounts: the deltas, the fee and the other side. */
function effectOf(postings: EntryRow[], own: { available: string; reserved: string }) {
  let dAvailable = 0n;
  let dReserved = 0n;
  let fee = 0n;
  const others: string[] = [];
  for (const p of postings) {
    if (p.account === own.available) dAvailable += signed(p);
    else if (p.account === own.reserved) dReserved += signed(p);
    else if (p.account === accounts.fees) fee += BigInt(p.amount);
    else others.push(p.account);
  }
  const counterparty = others[0] ?? (dAvailable !== 0n && dReserved !== 0n ? (dAvailable < 0n ? own.reserved : own.available) : '');
  return { dAvailable, dReserved, fee, counterparty };
}

export async function buildStatement(knex: Knex, q: StatementQuery): Promise<Statement> {
  const own = accountsOf(q.merchantId);
  let { available, reserved } = await openingOf(knex, q);
  const openingBalances = { available: available.toString(), reserved: reserved.toString() };
  const byEvent = await postingsByEvent(knex, q);
  const lines: StatementLine[] = [];
  let totalAvailable = 0n;
  let totalReserved = 0n;
  let totalFees = 0n;
  for (const postings of byEvent.values()) {
    const first = postings[0]!;
    const { dAvailable, dReserved, fee, counterparty } = effectOf(postings, own);
    available += dAvailable;
    reserved += dReserved;
    totalAvailable += dAvailable;
    totalReserved += dReserved;
    totalFees += fee;
    lines.push({
      position: first.global_position, event_id: first.event_id, at: new Date(first.created_at).toISOString(),
      movement: first.movement, movement_id: first.movement_id, reference_type: first.reference_type, reference_id: first.reference_id,
      description: describe(first.movement, first.reference_type, first.reference_id, fee),
      available_delta: dAvailable.toString(), reserved_delta: dReserved.toString(), fee: fee.toString(), counterparty,
      available_balance: available.toString(), reserved_balance: reserved.toString(),
    });
  }
  const closing = { available: available.toString(), reserved: reserved.toString() };
  const reconciled = BigInt(openingBalances.available) + totalAvailable === available
    && BigInt(openingBalances.reserved) + totalReserved === reserved;
  return {
    merchant_id: q.merchantId, currency: q.currency, from: q.from.toISOString(), to: q.to.toISOString(),
    opening: openingBalances, closing,
    totals: { movements: lines.length, available_delta: totalAvailable.toString(), reserved_delta: totalReserved.toString(), fees: totalFees.toString() },
    reconciled, lines,
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
