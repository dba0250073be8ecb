// The merchant's event feed (CONTRACT.md §12): `GET /events/stream`, Server-Sent Events of every new
// event as it is recorded, resumable with Last-Event-ID; and the oldest-first part of `GET /events`
// (`order=asc&after=`), which lists the same events in the same order (projections/event-feed.ts).
import type { Knex } from 'knex';
import type { ApiModule, Ctx } from '../module.ts';
import { errors } from '../openapi/common.ts';
import { DomainError, invariant } from '../../domain/errors.ts';
import type { Page, ListRequest } from '../../projections/pagination.ts';
import { feedPositionOf, paginateFeed } from '../../projections/event-feed.ts';
import { eventStreamsOf } from '../event-stream/streams.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `GET /events`'s parameters for the feed order (events.ts lists them with its own). */
export const feedListParameters = [
  {
    name: 'order', in: 'query', schema: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
    description: 'desc (default): newest first by created_at. asc: oldest first in feed order, the order of GET /events/stream, ' +
      'in which an event recorded later always comes after every event already listed (safe to resume from with after).',
  },
  {
    name: 'after', in: 'query', schema: { type: 'string', format: 'uuid' },
    description: 'With order=asc: only the events after this event id (e.g. the last one processed). 404 not_found for an id ' +
      'that is not one of this merchant\'s events (another merchant\'s answers the same).',
  },
];

/** The feed position of the merchant's event `id`; 404 for an unknown id and for another merchant's alike. */
async function positionOf(ctx: Ctx, id: string, field: string): Promise<bigint> {
  if (!UUID.test(id)) throw new DomainError('bad_request', `${field} is not an event id`, [{ field, message: 'must be an event id (uuid)' }]);
  const position = await feedPositionOf(ctx.services.knex, ctx.merchantId, id);
  if (position === undefined) throw new DomainError('not_found', 'Event not found', [{ field, message: 'not one of this merchant\'s events' }]);
  return position;
}

/**
 * The page of `GET /events` the query asks for when it is the feed order's (`order=asc`), else
 * undefined (the newest-first list); `after` without `order=asc` is a 400.
 */
export async function feedOrderPage<Row, Item>(
  ctx: Ctx, query: Knex.QueryBuilder, list: ListRequest, toItem: (row: Row) => Item,
): Promise<Page<Item> | undefined> {
  const { order, after } = ctx.query as { order?: string; after?: string };
  if (order !== 'asc') {
    if (after) throw new DomainError('bad_request', 'after needs order=asc', [{ field: 'query.after', message: 'only with order=asc' }]);
    return undefined;
  }
  const from = after ? await positionOf(ctx, after, 'query.after') : undefined;
  return paginateFeed(query, { ...list, after: from }, toItem);
}

const lastEventIdHeader = {
  name: 'Last-Event-ID', in: 'header', schema: { type: 'string', format: 'uuid' },
  description: 'The id of the last event received (browsers\' EventSource sends it when reconnecting): every event after it ' +
    'comes first, then the live ones. 404 not_found for an id that is not one of this merchant\'s events.',
};

export const eventStreamModule: ApiModule = {
  paths: {
    '/events/stream': {
      get: {
        'x-auth': 'merchant', tags: ['Events'], 'x-scope': 'events:read', operationId: 'streamEvents',
        summary: 'Every new event as it is recorded (Server-Sent Events), resumable with Last-Event-ID',
        description:
          'A text/event-stream: each event is `id: <event id>` and `data: <webhook envelope>` (the JSON a webhook body carries). ' +
          'Without Last-Event-ID (or after) it starts with the next event recorded; with it, every event after that one comes ' +
          'first, then the live ones, in the order of GET /events?order=asc: no event is skipped or repeated across a reconnect. ' +
          'An idle stream gets a comment line (`: keep-alive`) every 15 seconds. At most 5 open streams per merchant, all API ' +
          'processes together (EVENT_STREAMS_PER_MERCHANT): past it, 429 rate_limited with Retry-After.',
        parameters: [lastEventIdHeader, { ...feedListParameters[1]!, description: 'Like Last-Event-ID, for clients that cannot set headers (Last-Event-ID wins).' }],
        responses: {
          200: {
            description: 'The event stream (stays open)',
            content: { 'text/event-stream': { schema: { type: 'string', description: 'id: <event id>\\ndata: <envelope JSON>\\n\\n, and `: keep-alive` comments' } } },
          },
          400: errors[400], 401: errors[401], 404: errors[404], 429: errors[429],
        },
      },
    },
  },
  handlers: {
    streamEvents: async (ctx) => {
      const header = ctx.headers['last-event-id'];
      const resumeFrom = typeof header === 'string' && header !== '' ? header : (ctx.query.after as string | undefined);
      const field = typeof header === 'string' && header !== '' ? 'header.last-event-id' : 'query.after';
      const after = resumeFrom ? await positionOf(ctx, resumeFrom, field) : undefined;
      invariant(ctx.credential, 'a merchant operation carries its credential');
      const session = await eventStreamsOf(ctx.services).openStream(ctx.credential, after, ctx.log);
      return { status: 200, stream: (res) => session.attach(res) };
    },
  },
};
