// For projection tests that feed batches by hand: a store on a fresh test database, checkpoints
// for the projections given, every statement knex sends recorded, and `next` (append, then the
// events since the previous call: what the projector's next batch holds).
import type { Test } from 'tap';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { systemClock } from '../../infra/clock.ts';
import { ensureCheckpoints } from '../../infra/checkpoints.ts';
import { historyOf } from '../../projections/history.ts';
import type { RecordedEvent } from '../../infra/eventstore/types.ts';
import { testDatabase } from './db.ts';

export async function projectionBatches(t: Test, names: string[]) {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  await ensureCheckpoints(tdb.db.knex, names);
  const sent: string[] = [];
  const onQuery = (q: { sql: string }) => { sent.push(q.sql); };
  tdb.db.knex.on('query', onQuery);
  t.teardown(() => { tdb.db.knex.removeListener('query', onQuery); });
  let position = 0n;
  const next = async (appends: Parameters<typeof store.append>[0]): Promise<RecordedEvent[]> => {
    await store.append(appends);
    const events = await store.readAll(position, 1000);
    position = events[events.length - 1]!.position;
    return events;
  };
  return { knex: tdb.db.knex, store, next, sent, history: historyOf(store) };
}
