import t from 'tap';
import { PostgresEventStore } from '../src/infra/eventstore/postgres.ts';
import { systemClock } from '../src/infra/clock.ts';
import { eventStoreContract } from './helpers/eventstore-contract.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`event-store contract on ${dbLabel}`);
eventStoreContract(t, async () => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  await store.start();
  return { store, teardown: async () => { await store.close(); await tdb.teardown(); } };
});
