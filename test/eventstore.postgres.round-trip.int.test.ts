// On PostgreSQL a group-commit batch is one round trip (bench issue 8: it was four), planned on the
// versions the store assumes and checked under the append lock: a stream that moved behind this
// store's back (another instance, another process) costs one more round trip, never a wrong version,
// and a stale expected version still fails only its own append.
import t from 'tap';
import pg from 'pg';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { WrongExpectedVersion } from '../infra/eventstore/types.ts';
import { testDatabase } from './helpers/db.ts';

{
  /** Queries sent by pg clients while `fn` runs (the store's writer uses its own pg connection). */
  const counted = async <T>(fn: () => Promise<T>): Promise<{ value: T; queries: string[] }> => {
    const queries: string[] = [];
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
      const q = args[0];
      queries.push(typeof q === 'string' ? q : q?.text ?? String(q));
      return (original as any).apply(this, args);
    } as any;
    try {
      return { value: await fn(), queries };
    } finally {
      pg.Client.prototype.query = original;
    }
  };

  t.test('one append, one batch of many: one statement each, no BEGIN or COMMIT', async (t) => {
    const tdb = await testDatabase();
    const store = new PostgresEventStore(tdb.db, systemClock);
    t.teardown(async () => { await store.close(); await tdb.teardown(); });
    const one = await counted(() => store.append([{ streamId: 'rt-1', expectedVersion: 0, events: [{ type: 'a', data: { n: 1 } }] }]));
    const isAppend = (q: string) => q.startsWith('SELECT ') && q.includes(' FROM event_store_append($1, ');
    t.equal(one.queries.length, 1, 'one round trip');
    t.ok(isAppend(one.queries[0]!), 'the append function');
    t.equal(one.value.versions['rt-1'], 1);
    const many = await counted(() => Promise.all(Array.from({ length: 20 }, (_, i) =>
      store.append([{ streamId: `rt-many-${i}`, expectedVersion: 0, events: [{ type: 'a', data: { i } }, { type: 'b', data: { i } }] }]))));
    t.ok(many.queries.length >= 1 && many.queries.every(isAppend), `${many.queries.length} statements for 20 appends`);
    t.ok(many.value.every((r) => r.events.length === 2 && r.events[1]!.version === 2));
  });

  t.test('a stream moved by another store instance: planned again on the actual version, once', async (t) => {
    const tdb = await testDatabase();
    const mine = new PostgresEventStore(tdb.db, systemClock);
    const other = new PostgresEventStore(tdb.db, systemClock);
    t.teardown(async () => { await mine.close(); await other.close(); await tdb.teardown(); });
    await mine.append([{ streamId: 'moved', expectedVersion: 0, events: [{ type: 'a', data: {} }] }]);
    await other.append([{ streamId: 'moved', expectedVersion: 1, events: [{ type: 'b', data: {} }] }]);
    // `mine` last saw version 1; the stream is at 2.
    const any = await counted(() => mine.append([{ streamId: 'moved', expectedVersion: 'any', events: [{ type: 'c', data: {} }] }]));
    t.equal(any.queries.length, 2, 'the check failed under the lock, the second plan went through');
    t.equal(any.value.versions.moved, 3, 'appended after the other instance\'s event');
    const stale = await counted(() => mine.append([{ streamId: 'moved', expectedVersion: 2, events: [{ type: 'd', data: {} }] }]).then(() => undefined, (e: unknown) => e));
    t.ok(stale.value instanceof WrongExpectedVersion, 'a stale expectation is refused');
    const events = await mine.readStream('moved');
    t.same(events.map((e) => [e.version, e.type]), [[1, 'a'], [2, 'b'], [3, 'c']], 'nothing lost, nothing doubled, in order');
  });
  t.test('a hot stream: stale expectations cost no round trip, and do not fail the batch\'s fresh one', async (t) => {
    const tdb = await testDatabase();
    const store = new PostgresEventStore(tdb.db, systemClock);
    t.teardown(async () => { await store.close(); await tdb.teardown(); });
    await store.append([{ streamId: 'hot', expectedVersion: 0, events: [{ type: 'a', data: {} }] }]);
    // Writers racing on one stream: one still one behind (first in the batch), one up to date.
    const settle = (p: Promise<unknown>) => p.then((r) => r, (e: unknown) => e);
    const race = await counted(() => Promise.all([
      settle(store.append([{ streamId: 'hot', expectedVersion: 0, events: [{ type: 'stale', data: {} }] }])),
      settle(store.append([{ streamId: 'hot', expectedVersion: 1, events: [{ type: 'fresh', data: {} }] }])),
    ]));
    t.equal(race.queries.length, 1, 'planned on the version this store saw, not on the stale expectation first in line');
    t.ok(race.value[0] instanceof WrongExpectedVersion, 'the stale append is refused');
    t.equal((race.value[1] as { versions: Record<string, number> }).versions.hot, 2, 'the fresh one is appended');
    const again = await counted(() => settle(store.append([{ streamId: 'hot', expectedVersion: 1, events: [{ type: 'late', data: {} }] }])));
    t.ok(again.value instanceof WrongExpectedVersion, 'an expectation below a committed version is refused');
    t.equal(again.queries.length, 0, 'without asking the server (a version only grows)');
    t.same((await store.readStream('hot')).map((e) => e.type), ['a', 'fresh'], 'nothing else written');
  });
  t.test('a bounded read of versions this store committed is served from memory, others from the table', async (t) => {
    const tdb = await testDatabase();
    const mine = new PostgresEventStore(tdb.db, systemClock);
    const other = new PostgresEventStore(tdb.db, systemClock);
    t.teardown(async () => { await mine.close(); await other.close(); await tdb.teardown(); });
    // Reads go through knex (appends through the store's own writer connection).
    const reads: string[] = [];
    const onQuery = (q: { sql: string }) => { if (q.sql.includes('FROM events')) reads.push(q.sql); };
    tdb.db.knex.on('query', onQuery);
    t.teardown(() => { tdb.db.knex.removeListener('query', onQuery); });
    await mine.append([{ streamId: 'snap', expectedVersion: 0, events: [{ type: 'a', data: {} }, { type: 'b', data: {} }] }]);
    t.same((await mine.readStream('snap', 1, 2)).map((e) => [e.version, e.type]), [[1, 'a'], [2, 'b']]);
    t.equal(reads.length, 0, 'no round trip');
    await other.append([{ streamId: 'snap', expectedVersion: 2, events: [{ type: 'c', data: {} }] }]);
    await mine.append([{ streamId: 'snap', expectedVersion: 3, events: [{ type: 'd', data: {} }] }]);
    t.same((await mine.readStream('snap', 1, 4)).map((e) => e.type), ['a', 'b', 'c', 'd'], 'version 3, another store\'s, comes from the table');
    t.equal(reads.length, 1, 'one read of the stream');
    t.same((await mine.readStream('snap', 4, 4)).map((e) => e.type), ['d'], 'a range of its own again');
    t.equal(reads.length, 1, 'from memory');
  });
}
