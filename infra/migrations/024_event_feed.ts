import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// CONTRACT §12 (the merchant's event feed): every webhook event gets a feed position, the order of
// `GET /events?order=asc&after=` and of `GET /events/stream`.
//
// The recorder inserts webhook events asynchronously (a bus consumer with concurrency, batched per
// event-loop turn, in several processes), so neither created_at nor a plain sequence is an order a
// reader can follow: a sequence hands out values before commit, and a reader that served 11 would
// never see a 10 committed after it. The guard is the event store's (infra/eventstore/postgres.ts):
// each inserting transaction takes one transaction-scoped advisory lock BEFORE it draws a position
// and holds it until it has committed (PostgreSQL makes a transaction visible before it releases its
// locks). Inserting transactions therefore commit one after the other in position order: a snapshot
// that sees position P sees every position below P that will ever exist, and a new event can only
// ever appear after every event already served. The trigger does it for every writer of the table,
// whichever statement inserts (workers/webhooks/store.ts's plain insert, record_webhook_events_each).
// The lock is held by one recording statement at a time, for its own remaining work and its commit.
//
// Readers in other processes learn of new rows by NOTIFY (delivered at commit, once per statement);
// projections/event-feed-watch.ts listens, with a poll as the fallback.
//
// event_stream_leases: the open streams of every API process (a row each, renewed while the stream
// is open, gone when it closes or, after a crash, when it expires), so that the bound on open
// streams per merchant holds across processes (api/event-stream/leases.ts).
const FEED_LOCK_KEY = 7_201_410_024; // arbitrary, fixed; not the event store's append lock

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'CREATE SEQUENCE webhook_events_feed_seq AS bigint',
    'ALTER TABLE webhook_events ADD COLUMN feed_seq bigint',
    // Events recorded before this migration take their place in created_at order.
    `UPDATE webhook_events w SET feed_seq = o.n
       FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM webhook_events) o WHERE w.id = o.id`,
    `SELECT setval('webhook_events_feed_seq', COALESCE((SELECT max(feed_seq) FROM webhook_events), 0) + 1, false)`,
    'ALTER TABLE webhook_events ALTER COLUMN feed_seq SET NOT NULL',
    'CREATE UNIQUE INDEX webhook_events_feed ON webhook_events (merchant_id, feed_seq)',
    'CREATE UNIQUE INDEX webhook_events_feed_head ON webhook_events (feed_seq)',
    `CREATE FUNCTION webhook_events_feed_position() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(${FEED_LOCK_KEY});
       NEW.feed_seq := nextval('webhook_events_feed_seq');
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER webhook_events_feed_position BEFORE INSERT ON webhook_events
       FOR EACH ROW EXECUTE FUNCTION webhook_events_feed_position()`,
    `CREATE FUNCTION webhook_events_feed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_notify('webhook_feed', '');
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER webhook_events_feed_notify AFTER INSERT ON webhook_events
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_feed_notify()`,
    `CREATE TABLE event_stream_leases (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
    'CREATE INDEX event_stream_leases_merchant ON event_stream_leases (merchant_id)',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'DROP TABLE event_stream_leases',
    'DROP TRIGGER webhook_events_feed_notify ON webhook_events',
    'DROP FUNCTION webhook_events_feed_notify()',
    'DROP TRIGGER webhook_events_feed_position ON webhook_events',
    'DROP FUNCTION webhook_events_feed_position()',
    'ALTER TABLE webhook_events DROP COLUMN feed_seq',
    'DROP SEQUENCE webhook_events_feed_seq',
  ]);
}
