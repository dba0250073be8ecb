import t from 'tap';
import pg from 'pg';
import { PostgresEventStore, APPEND_LOCK_KEY } from '../infra/eventstore/postgres.ts';
import { ManualClock, systemClock } from '../infra/clock.ts';
import { openDatabase } from '../infra/db.ts';
import { eventStoreContract } from './helpers/eventstore-contract.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`event-store contract on ${dbLabel}`);
eventStoreContract(t, async () => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  await store.start();
  const others: Array<{ store: PostgresEventStore; close(): Promise<void> }> = [];
  return {
    store,
    teardown: async () => {
      for (const o of others) await o.close();
      await store.close();
      await tdb.teardown();
    },
    // On PostgreSQL, more instances with pools of their own, as other processes would have.
    another: tdb.url ? async () => {
      const db = await openDatabase({ databaseUrl: tdb.url, poolMax: 4 });
      const other = new PostgresEventStore(db, systemClock);
      await other.start();
      others.push({ store: other, close: async () => { await other.close(); await db.close(); } });
      return other;
    } : undefined,
  };
});

// The late-commit trap, directly: a transaction that drew its position and has not committed yet
// cannot be overtaken, because the next append waits for the append lock; a reader therefore never
// sees a higher position while a lower one is still to come.
t.test('an append in flight is never overtaken: the next one waits, readers see both in order', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  await store.start();
  const held = new pg.Client({ connectionString: tdb.url });
  await held.connect();
  t.teardown(async () => { await held.end().catch(() => undefined); await store.close(); await tdb.teardown(); });

  const from = await store.head();
  await held.query('BEGIN');
  await held.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY]);
  const first = await held.query<{ global_position: string }>(
    `INSERT INTO events (stream_id, stream_version, event_id, type, data, created_at)
     VALUES ('late-1', 1, gen_random_uuid(), 'late', '{}', now()) RETURNING global_position`);
  let secondDone = false;
  const second = store.append([{ streamId: 'late-2', expectedVersion: 0, events: [{ type: 'after', data: {} }] }])
    .then((r) => { secondDone = true; return r; });
  await waitUntil('the second append waiting for the append lock', async () => Number((await held.query(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rows[0].n) > 0);
  t.notOk(secondDone, 'the second append waits while the first is in flight');
  t.same((await store.readAll(from, 10)).map((e) => e.type), [], 'nothing is readable yet');
  await held.query('COMMIT');
  const r = await second;
  t.ok(r.position > BigInt(first.rows[0]!.global_position), 'the second commits after, with a higher position');
  t.same((await store.readAll(from, 10)).map((e) => e.type), ['late', 'after'], 'readers see both, in position order');
});


// createdAt is read as epoch milliseconds (cheaper to parse than a timestamp's text): the same
// instant as the clock's at the append, on every path that reads events back.
t.test('createdAt is the append clock\'s time, to the millisecond, as appended and as read', async (t) => {
  const tdb = await testDatabase();
  const clock = new ManualClock(new Date('2026-11-24T19:36:12.123Z'));
  const store = new PostgresEventStore(tdb.db, clock);
  await store.start();
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const stamps = ['2026-11-24T19:36:12.123Z', '2026-11-24T19:36:12.999Z', '2026-11-24T19:36:13.000Z', '1999-12-31T23:59:59.001Z'];
  const appended: string[] = [];
  for (const [i, stamp] of stamps.entries()) {
    clock.set(new Date(stamp));
    const r = await store.append([{ streamId: 'time-1', expectedVersion: i, events: [{ type: `t${i}`, data: {} }] }]);
    appended.push(r.events[0]!.createdAt.toISOString());
  }
  t.same(appended, stamps, 'as appended');
  t.same((await store.readStream('time-1')).map((e) => e.createdAt.toISOString()), stamps, 'as read');
  t.same((await store.readStream('time-1', 2, 3)).map((e) => e.createdAt.toISOString()), stamps.slice(1, 3), 'a range, as read');
  const all = (await store.readAll(0n, 10, { metadata: false })).filter((e) => e.streamId === 'time-1');
  t.same(all.map((e) => e.createdAt.toISOString()), stamps, 'readAll alike');
  const [stored] = (await tdb.db.knex.raw<{ rows: Array<{ at: string }> }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM events WHERE stream_id = 'time-1' ORDER BY stream_version`)).rows;
  t.equal(stored!.at, stamps[0], 'the column holds the same instant');
});
