// Cursor pagination for every list of the merchant API (CONTRACT.md §8): customers, quotes, payins,
// payouts, transfers, events. Keyset pagination over (created_at, id), newest first: a page is
// stable while rows are inserted (new rows go before the first page, never into the middle), and
// each page costs one index range scan whatever its depth.
import type { Knex } from 'knex';
import { DomainError } from '../domain/errors.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** One page of a list, as every list endpoint answers it. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  /** Pass back as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

/** The list parameters every list endpoint shares (the other filters are the caller's). */
export interface ListRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
  /** Inclusive lower bound on created_at (ISO 8601). */
  createdFrom?: string | undefined;
  /** Inclusive upper bound on created_at (ISO 8601). */
  createdTo?: string | undefined;
}

export interface PaginateOptions {
  /** The creation-time column (timestamptz), table-qualified if the query joins. Default `created_at`. */
  createdAtColumn?: string;
  /** The id column (unique), table-qualified if the query joins. Default `id`. */
  idColumn?: string;
}

interface CursorPosition {
  /** created_at as PostgreSQL prints a timestamptz (full microsecond precision, with its offset). */
  createdAt: string;
  id: string;
}

const CURSOR_COLUMN = '__page_cursor_at';
const CURSOR_ID_COLUMN = '__page_cursor_id';
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}(:?[0-9]{2}){0,2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads the shared list parameters from a validated query (`limit`, `cursor`, `created_from`, `created_to`). */
export function listRequest(query: Record<string, unknown>): ListRequest {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    limit: typeof query.limit === 'number' ? query.limit : undefined,
    cursor: text(query.cursor),
    createdFrom: dayBound(text(query.created_from), 'start'),
    createdTo: dayBound(text(query.created_to), 'end'),
  };
}

const CALENDAR_DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/**
 * A bound given as a date (YYYY-MM-DD) is a whole UTC day, inclusive at both ends: `created_from`
 * from its first instant, `created_to` to its last microsecond (created_at's precision), as a
 * merchant asking for "up to the 25th" means the 25th too. A date-time is kept as sent.
 */
function dayBound(value: string | undefined, end: 'start' | 'end'): string | undefined {
  if (value === undefined || !CALENDAR_DATE.test(value)) return value;
  return end === 'start' ? `${value}T00:00:00.000000Z` : `${value}T23:59:59.999999Z`;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8').toString('base64url');
}

/** The 400 every list answers for a cursor this service did not issue. */
export const invalidCursor = () => new DomainError('bad_request', 'Invalid cursor', [{ field: 'query.cursor', message: 'is not a cursor returned by this list' }]);

/** The two values a list's cursor carries (base64url JSON), unchecked; anything else is invalidCursor. */
export function cursorPair(cursor: string, maxLength: number): [unknown, unknown] {
  if (cursor.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalidCursor();
  return decoded as [unknown, unknown];
}

/** The position a cursor names; a cursor this service did not issue is a 400 naming `query.cursor`. */
export function decodeCursor(cursor: string): CursorPosition {
  const invalid = invalidCursor;
  const [createdAt, id] = cursorPair(cursor, 200);
  if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt)) throw invalid();
  // PostgreSQL prints `2026-06-01 10:00:00.123+00`; JavaScript parses it once written the ISO way.
  const asIso = createdAt.replace(' ', 'T').replace(/([+-][0-9]{2})$/, '$1:00');
  if (Number.isNaN(Date.parse(asIso))) throw invalid();
  if (typeof id !== 'string' || !UUID.test(id)) throw invalid();
  return { createdAt, id };
}

/**
 * Runs `query` as one page of a list, newest first.
 *
 * `query` is a knex select already scoped to the merchant and carrying the endpoint's own filters,
 * with its columns selected explicitly (`.select('*')` or a column list): this adds the created_at
 * range, the cursor's position, the order (created_at desc, id desc) and the limit, reads one row
 * more than the page to learn `has_more`, and maps each row with `toItem`.
 *
 * The cursor is opaque (base64url) and carries the last row's exact created_at (microseconds) and
 * id; it does not carry the filters, so the caller sends the same filters with it. A cursor that
 * does not decode is refused with 400 `bad_request`.
 */
export async function paginate<Row, Item>(
  knex: Knex,
  query: Knex.QueryBuilder,
  list: ListRequest,
  toItem: (row: Row) => Item,
  options: PaginateOptions = {},
): Promise<Page<Item>> {
  const createdAt = options.createdAtColumn ?? 'created_at';
  const id = options.idColumn ?? 'id';
  const limit = Math.min(Math.max(Math.trunc(list.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT);

  const q = query.clone();
  if (list.createdFrom !== undefined) q.where(createdAt, '>=', list.createdFrom);
  if (list.createdTo !== undefined) q.where(createdAt, '<=', list.createdTo);
  if (list.cursor !== undefined) {
    const after = decodeCursor(list.cursor);
    q.whereRaw('(??, ??) < (?::timestamptz, ?)', [createdAt, id, after.createdAt, after.id]);
  }
  q.select(knex.raw('??::text AS ??', [createdAt, CURSOR_COLUMN]), knex.raw('??::text AS ??', [id, CURSOR_ID_COLUMN]))
    .orderBy([{ column: createdAt, order: 'desc' }, { column: id, order: 'desc' }])
    .limit(limit + 1);

  const rows = (await q) as Array<Row & Record<string, unknown>>;
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  const next = hasMore && last ? encodeCursor({ createdAt: String(last[CURSOR_COLUMN]), id: String(last[CURSOR_ID_COLUMN]) }) : null;
  const data = pageRows.map((r) => {
    const { [CURSOR_COLUMN]: _at, [CURSOR_ID_COLUMN]: _id, ...row } = r;
    return toItem(row as Row);
  });
  return { data, has_more: hasMore, next_cursor: next };
}
