// The money and transfer read models apply a batch with a fixed number of statements whatever its
// size (bench issue 8: a query per event made the projector, which every create's read-your-writes
// waits on, the bottleneck under load), with the same rows as one event at a time.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../src/infra/eventstore/postgres.ts';
import { systemClock } from '../src/infra/clock.ts';
import { moneyProjection } from '../src/projections/money.ts';
import type { RecordedEvent } from '../src/infra/eventstore/types.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { quoteCreated } from './helpers/quote-events.ts';

t.comment(`on ${dbLabel}`);

t.test('a batch of many quotes: one read and one write of the table, same rows as event by event', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const merchant = randomUUID();
  const ids = Array.from({ length: 120 }, () => randomUUID());
  await store.append(ids.map((id) => ({ streamId: `quote-${id}`, expectedVersion: 0, events: [quoteCreated(id, merchant)] })));
  const events: RecordedEvent[] = await store.readAll(0n, 1000);
  let statements = 0;
  let counting = false;
  const count = () => { if (counting) statements++; };
  tdb.db.knex.on('query', count);
  await tdb.db.knex.transaction(async (tx) => {
    counting = true;
    await moneyProjection.apply(tx, events);
    counting = false;
  });
  tdb.db.knex.removeListener('query', count);
  t.ok(statements <= 3, `${statements} statements for ${events.length} events`);
  const rows = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'status');
  t.equal(rows.length, ids.length, 'every quote has its row');
  t.ok(rows.every((r: { version: number; status: string }) => r.version === 1 && r.status === 'active'));

  // Applying the same batch again changes nothing (idempotent), and one event at a time agrees.
  await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, events));
  const again = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'body').orderBy('id');
  await tdb.db.knex('quotes').where({ merchant_id: merchant }).delete();
  for (const e of events) await tdb.db.knex.transaction((tx) => moneyProjection.apply(tx, [e]));
  const single = await tdb.db.knex('quotes').where({ merchant_id: merchant }).select('id', 'version', 'body').orderBy('id');
  t.same(again, single, 'batched and event-by-event rows are the same');
});
