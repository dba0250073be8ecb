import t from 'tap';
import pg from 'pg';
import { PostgresEventStore, APPEND_LOCK_KEY } from '../src/infra/eventstore/postgres.ts';
import { systemClock } from '../src/infra/clock.ts';
import { openDatabase } from '../src/infra/db.ts';
import { eventStoreContract } from './helpers/eventstore-contract.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

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
t.test('an append in flight is never overtaken: the next one waits, readers see both in order', { skip: tdbLabelSkip() }, async (t) => {
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
  await new Promise((r) => setTimeout(r, 500));
  t.notOk(secondDone, 'the second append waits while the first is in flight');
  t.same((await store.readAll(from, 10)).map((e) => e.type), [], 'nothing is readable yet');
  await held.query('COMMIT');
  const r = await second;
  t.ok(r.position > BigInt(first.rows[0]!.global_position), 'the second commits after, with a higher position');
  t.same((await store.readAll(from, 10)).map((e) => e.type), ['late', 'after'], 'readers see both, in position order');
});

function tdbLabelSkip(): string | false {
  return process.env.DATABASE_URL ? false : 'needs DATABASE_URL: PGlite has one connection, no transaction can be held beside another';
}
