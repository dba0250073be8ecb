// The merchant's event feed (CONTRACT.md §12): its webhook events in feed order, the order of
// `GET /events?order=asc&after=` and of `GET /events/stream`.
//
// Feed order is `webhook_events.feed_seq` (migration 024): drawn under the merchant's own lock held
// to commit (migration 034), so a merchant's positions become visible in order. A reader of the
// merchant's feed that has seen position P has seen every position of that merchant below it that
// will ever exist: resuming "after the last event I got" never skips an event that committed late,
// and never repeats one. (created_at, the order of the newest-first list, is not
// such an order: the recorder inserts rows out of order, several processes at once.)
import type { Knex } from 'knex';
import { DomainError } from '../domain/errors.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, type ListRequest, type Page } from './pagination.ts';

/** One event of the feed: its id, its position, and the envelope exactly as its webhook body carries it. */
export interface FeedEvent {
  id: string;
  position: bigint;
  body: string;
}

interface FeedRow {
  id: string;
  feed_seq: string;
  body: string;
}

const toFeedEvent = (r: FeedRow): FeedEvent => ({ id: r.id, position: BigInt(r.feed_seq), body: r.body });

/** The feed position of one of the merchant's events; undefined for an unknown id or another merchant's (never told apart). */
export async function feedPositionOf(knex: Knex, merchantId: string, eventId: string): Promise<bigint | undefined> {
  const row = (await knex('webhook_events').where({ id: eventId, merchant_id: merchantId }).first('feed_seq')) as { feed_seq: string } | undefined;
  return row ? BigInt(row.feed_seq) : undefined;
}

/** The merchant's newest feed position (0 when it has no event yet): a stream without Last-Event-ID starts after it. */
export async function merchantFeedHead(knex: Knex, merchantId: string): Promise<bigint> {
  const row = (await knex('webhook_events').where({ merchant_id: merchantId }).max('feed_seq as head').first()) as { head: string | null } | undefined;
  return BigInt(row?.head ?? 0);
}

/** The merchant's events after `position`, oldest first, at most `limit`. */
export async function feedAfter(knex: Knex, merchantId: string, position: bigint, limit: number): Promise<FeedEvent[]> {
  const rows = (await knex('webhook_events')
    .where({ merchant_id: merchantId }).where('feed_seq', '>', position.toString())
    .orderBy('feed_seq', 'asc').limit(limit).select('id', 'feed_seq', 'body')) as FeedRow[];
  return rows.map(toFeedEvent);
}

/**
 * The newest feed position of each of these merchants (0 for one without events): one index probe
 * each. Positions become visible in order per merchant only (migration 034), so a watch follows each
 * merchant's own head; a head across merchants would let a merchant's late commit fall behind it.
 */
export async function merchantHeads(knex: Knex, merchantIds: string[]): Promise<Map<string, bigint>> {
  const r = await knex.raw<{ rows: Array<{ merchant_id: string; head: string | null }> }>(
    `SELECT m.id AS merchant_id, (SELECT max(w.feed_seq) FROM webhook_events w WHERE w.merchant_id = m.id)::text AS head
       FROM unnest(?::uuid[]) AS m(id)`, [merchantIds],
  );
  return new Map(r.rows.map((x) => [x.merchant_id, BigInt(x.head ?? 0)]));
}

const FEED_CURSOR = 'feed';

function encodeFeedCursor(position: bigint): string {
  return Buffer.from(JSON.stringify([FEED_CURSOR, position.toString()]), 'utf8').toString('base64url');
}

/** The position an oldest-first cursor names; anything else (a newest-first list's cursor too) is a 400 naming `query.cursor`. */
function decodeFeedCursor(cursor: string): bigint {
  const invalid = () => new DomainError('bad_request', 'Invalid cursor', [{ field: 'query.cursor', message: 'is not a cursor returned by this list (with order=asc)' }]);
  if (cursor.length > 100 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== FEED_CURSOR) throw invalid();
  const position = decoded[1];
  if (typeof position !== 'string' || !/^[0-9]{1,19}$/.test(position)) throw invalid();
  return BigInt(position);
}

/**
 * One page of `query` (scoped to the merchant, with its filters and columns selected) in feed
 * order, oldest first, after `after` (a feed position) and after the cursor's position: both are
 * lower bounds, so a cursor may be sent with or without the `after` it started from.
 */
export async function paginateFeed<Row, Item>(
  query: Knex.QueryBuilder, list: ListRequest & { after?: bigint | undefined }, toItem: (row: Row) => Item,
): Promise<Page<Item>> {
  const limit = Math.min(Math.max(Math.trunc(list.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT);
  const q = query.clone();
  if (list.createdFrom !== undefined) q.where('created_at', '>=', list.createdFrom);
  if (list.createdTo !== undefined) q.where('created_at', '<=', list.createdTo);
  if (list.after !== undefined) q.where('feed_seq', '>', list.after.toString());
  if (list.cursor !== undefined) q.where('feed_seq', '>', decodeFeedCursor(list.cursor).toString());
  q.orderBy('feed_seq', 'asc').limit(limit + 1);
  const rows = (await q) as Array<Row & { feed_seq: string }>;
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map((r) => toItem(r)),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeFeedCursor(BigInt(last.feed_seq)) : null,
  };
}
