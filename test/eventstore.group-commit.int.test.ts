// Group commit (bench issue 8): writers that append again as soon as their previous append resolves
// share one transaction per round instead of a lone first writer going ahead of the others, and a
// version conflict still fails only the append that expected the wrong version.
import t from 'tap';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { WrongExpectedVersion } from '../infra/eventstore/types.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('8 writers × 10 appends each: about one transaction per round', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const WRITERS = 8;
  const ROUNDS = 10;
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    for (let v = 0; v < ROUNDS; v++) {
      await store.append([{ streamId: `gc-${w}`, expectedVersion: v, events: [{ type: 'tick', data: { v } }] }]);
    }
  }));
  const r = await tdb.db.knex.raw<{ rows: Array<{ n: string; events: string }> }>(
    `SELECT count(DISTINCT transaction_id) AS n, count(*) AS events FROM events WHERE stream_id LIKE 'gc-%'`,
  );
  t.equal(Number(r.rows[0]!.events), WRITERS * ROUNDS, 'every event written');
  // Without the turn of the event loop before a batch is taken, batches alternate 1 and 7: ~20.
  t.ok(Number(r.rows[0]!.n) <= ROUNDS + 2, `${r.rows[0]!.n} transactions for ${ROUNDS} rounds`);
});

t.test('in one batch, a wrong expected version fails that append only', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  await store.append([{ streamId: 'hot', expectedVersion: 0, events: [{ type: 'a', data: {} }] }]);
  const outcomes = await Promise.allSettled([
    store.append([{ streamId: 'hot', expectedVersion: 1, events: [{ type: 'b', data: {} }] }]),
    store.append([{ streamId: 'hot', expectedVersion: 1, events: [{ type: 'c', data: {} }] }]),
    store.append([{ streamId: 'cold', expectedVersion: 0, events: [{ type: 'd', data: {} }] }]),
  ]);
  t.equal(outcomes[0]!.status, 'fulfilled', 'the first append at version 1 wins');
  t.ok(outcomes[1]!.status === 'rejected' && outcomes[1].reason instanceof WrongExpectedVersion, 'the second gets WrongExpectedVersion');
  t.match((outcomes[1] as PromiseRejectedResult).reason, { streamId: 'hot', expected: 1, actual: 2 });
  t.equal(outcomes[2]!.status, 'fulfilled', 'another stream in the same batch is written');
  t.same((await store.readStream('hot')).map((e) => [e.type, e.version]), [['a', 1], ['b', 2]]);
  const all = await store.readAll(0n, 10);
  t.same(all.map((e) => e.position), [...all.map((e) => e.position)].sort((a, b) => (a < b ? -1 : 1)), 'positions ascend');
});
