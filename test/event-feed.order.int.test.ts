// The feed order (migration 024, projections/event-feed.ts): a reader that follows positions with
// `feedAfter` never skips an event that commits late. Writers on connections of their own insert
// webhook events and commit after a random pause (as the recorder's statements do, in several
// processes); a reader keeps reading "after the last position I served". What it served must be
// exactly the final list in feed order. The control runs the same workload with the position drawn
// without the lock (a plain sequence): there the reader does skip, which is what the lock prevents.
import t from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { feedAfter } from '../projections/event-feed.ts';
import type { Knex } from 'knex';
import * as m024 from '../infra/migrations/024_event_feed.ts';

t.comment(`on ${dbLabel}`);

const WRITERS = 6;
const PER_WRITER = 25;

async function writer(url: string, merchantId: string, rounds: number): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let i = 0; i < rounds; i++) {
      const id = randomUUID();
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
  const merchantId = randomUUID();
  let done = false;
  const writing = Promise.all(Array.from({ length: WRITERS }, () => writer(url, merchantId, PER_WRITER))).finally(() => { done = true; });
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
  t.equal(all.length, WRITERS * PER_WRITER, 'every event recorded');
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
