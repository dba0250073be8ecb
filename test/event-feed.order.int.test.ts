// The feed order (migrations 024 and 034, projections/event-feed.ts): a reader that follows a
// merchant's positions with `feedAfter` never skips an event that commits late. Writers on
// connections of their own insert webhook events of three merchants and commit after a random pause
// (as the recorder's statements do, in several processes); a reader keeps reading one merchant's
// feed "after the last position I served". What it served must be exactly that merchant's final
// list in feed order. The control runs the same workload with the position drawn without the lock
// (a plain sequence): there the reader does skip, which is what the lock prevents. The lock is the
// merchant's own: another merchant's recording never waits for it (issue 44), and the stream watch
// follows each merchant's own head.
import t from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { feedAfter } from '../projections/event-feed.ts';
import { EventFeedWatch } from '../projections/event-feed-watch.ts';
import { waitUntil } from './helpers/wait.ts';
import type { Knex } from 'knex';
import * as m024 from '../infra/migrations/024_event_feed.ts';

t.comment(`on ${dbLabel}`);

const WRITERS = 6;
const PER_WRITER = 25;

async function writer(url: string, merchantIds: string[], rounds: number): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let i = 0; i < rounds; i++) {
      const id = randomUUID();
      const merchantId = merchantIds[i % merchantIds.length]!;
      const now = new Date().toISOString();
      await c.query('BEGIN');
      await c.query(
        `INSERT INTO webhook_events (id, merchant_id, event, resource_type, resource_id, stream_id, stream_version, body, delivery_status, created_at, recorded_at, updated_at)
         VALUES ($1, $2, 'payin.completed', 'payin', $3, $4, 1, $5, 'not_configured', $6, $6, $6)`,
        [id, merchantId, randomUUID(), `payin-${id}`, JSON.stringify({ id }), now],
      );
      // Between drawing its position and committing, another writer may draw and commit.
      await c.query('SELECT pg_sleep($1)', [Math.random() * 0.02]);
      await c.query('COMMIT');
    }
  } finally {
    await c.end();
  }
}

/** Runs the writers while a reader follows the feed; answers [what the reader served, the final feed]. */
async function followWhileWriting(knex: Knex, url: string): Promise<[string[], string[]]> {
  const merchants = [randomUUID(), randomUUID(), randomUUID()];
  const merchantId = merchants[0]!;
  let done = false;
  const writing = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(url, [...merchants.slice(w % 3), ...merchants.slice(0, w % 3)], PER_WRITER)))
    .finally(() => { done = true; });
  const served: string[] = [];
  let position = 0n;
  for (;;) {
    const finished = done;
    const page = await feedAfter(knex, merchantId, position, 100);
    served.push(...page.map((e) => e.id));
    if (page.length > 0) position = page[page.length - 1]!.position;
    if (finished && page.length === 0) break;
  }
  await writing;
  const all = (await feedAfter(knex, merchantId, 0n, 1000)).map((e) => e.id);
  return [served, all];
}

t.test('a reader following feed positions serves every event once, in order, though commits come late', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const [served, all] = await followWhileWriting(tdb.db.knex, tdb.url);
  t.equal(all.length, (WRITERS * PER_WRITER) / 3, 'every event of the merchant recorded');
  t.same(served, all, 'served exactly the feed: none skipped, none twice, same order');
});

t.test('control: positions drawn without the lock are skipped by the same reader', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  await tdb.db.knex.raw(`CREATE OR REPLACE FUNCTION webhook_events_feed_position() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN NEW.feed_seq := nextval('webhook_events_feed_seq'); RETURN NEW; END $$`);
  let skipped = 0;
  for (let round = 0; round < 5 && skipped === 0; round++) {
    const [served, all] = await followWhileWriting(tdb.db.knex, tdb.url);
    skipped = all.length - served.length;
  }
  t.ok(skipped > 0, `without the lock the reader skipped ${skipped} late commits`);
});

t.test('migration 024: the events recorded before it take feed positions in created_at order; down and up again', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  await m024.down(knex);
  const merchantId = randomUUID();
  const row = (at: string) => {
    const id = randomUUID();
    return { id, merchant_id: merchantId, event: 'payin.completed', resource_type: 'payin', resource_id: randomUUID(), stream_id: `payin-${id}`,
      stream_version: 1, body: '{}', delivery_status: 'not_configured', created_at: at, recorded_at: at, updated_at: at };
  };
  // Recorded out of order, as the recorder does.
  const rows = [row('2026-11-26T10:00:02.000Z'), row('2026-11-26T10:00:00.000Z'), row('2026-11-26T10:00:01.000Z')];
  await knex('webhook_events').insert(rows);
  await m024.up(knex);
  const byCreation = [rows[1]!.id, rows[2]!.id, rows[0]!.id];
  t.same((await feedAfter(knex, merchantId, 0n, 10)).map((e) => e.id), byCreation, 'earlier events in created_at order');
  const later = row('2026-11-26T09:00:00.000Z');
  await knex('webhook_events').insert(later);
  t.same((await feedAfter(knex, merchantId, 0n, 10)).map((e) => e.id), [...byCreation, later.id], 'a new event comes after them, whatever its created_at');
});

/** A webhook_events row as the recorder hands record_webhook_events (jsonb). */
function feedRow(merchantId: string) {
  const id = randomUUID();
  const now = new Date().toISOString();
  return { id, merchant_id: merchantId, event: 'payin.completed', resource_type: 'payin', resource_id: randomUUID(), stream_id: `payin-${id}`,
    stream_version: 1, body: JSON.stringify({ id }), delivery_status: 'not_configured', created_at: now, recorded_at: now, updated_at: now };
}

/** A connection inside a transaction that has recorded one of the merchant's events and not committed: it holds the merchant's feed lock. */
async function holdingMerchant(url: string, merchantId: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT record_webhook_events($1::jsonb)', [JSON.stringify([feedRow(merchantId)])]);
  return c;
}

t.test('the feed lock is the merchant\'s own: another merchant records at once, the same merchant waits', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const [a, b] = [randomUUID(), randomUUID()];
  const holder = await holdingMerchant(tdb.url, a);
  const other = new pg.Client({ connectionString: tdb.url });
  await other.connect();
  try {
    // lock_timeout counts only time spent waiting for a lock, never a slow machine's time.
    await other.query(`SET lock_timeout = '300ms'`);
    const recorded = await other.query('SELECT record_webhook_events($1::jsonb) AS id', [JSON.stringify([feedRow(b)])]);
    t.equal(recorded.rows.length, 1, 'merchant B recorded while A\'s recording is open');
    await t.rejects(other.query('SELECT record_webhook_events($1::jsonb)', [JSON.stringify([feedRow(a)])]), { message: /lock timeout/ },
      'merchant A\'s next recording waits for the open one (its positions stay in commit order)');
  } finally {
    await holder.query('ROLLBACK');
    await Promise.all([holder.end(), other.end()]);
  }
});

t.test('batches naming the same merchants in opposite orders never deadlock', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const merchants = Array.from({ length: 4 }, () => randomUUID());
  const clients = await Promise.all([0, 1, 2, 3].map(async () => {
    const c = new pg.Client({ connectionString: tdb.url });
    await c.connect();
    return c;
  }));
  try {
    await Promise.all(clients.map(async (c, i) => {
      for (let round = 0; round < 30; round++) {
        const order = i % 2 === 0 ? merchants : [...merchants].reverse();
        await c.query('SELECT record_webhook_events($1::jsonb)', [JSON.stringify(order.map(feedRow))]);
      }
    }));
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  const counts = await tdb.db.knex('webhook_events').count('* as n').first();
  t.equal(Number(counts?.n), 4 * 30 * 4, 'every batch recorded, none aborted as a deadlock');
});

t.test('the stream watch follows each merchant\'s head: a merchant\'s late commit below another\'s position still wakes its streams', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const errors: unknown[] = [];
  // Polled once a minute: only the commits' NOTIFY wakes it within the test.
  const watch = new EventFeedWatch(tdb.db.knex, tdb.url, 60_000, (err) => errors.push(err));
  t.teardown(() => watch.close());
  const [a, b] = [randomUUID(), randomUUID()];
  const woken = { [a]: 0, [b]: 0 };
  await watch.subscribe(a, () => woken[a]!++);
  await watch.subscribe(b, () => woken[b]!++);
  // B draws the lower position and commits last.
  const late = await holdingMerchant(tdb.url, b);
  try {
    await tdb.db.knex.raw('SELECT record_webhook_events(?::jsonb)', [JSON.stringify([feedRow(a)])]);
    await waitUntil('merchant A\'s stream woken by its event', () => woken[a]! > 0);
    t.equal(woken[b], 0, 'B not woken before its commit');
  } finally {
    await late.query('COMMIT');
    await late.end();
  }
  await waitUntil('merchant B\'s stream woken by its event, committed after A\'s higher position', () => woken[b]! > 0);
  t.same(errors, [], 'no error in the watch');
});
