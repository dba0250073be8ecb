// Our event store (infra/eventstore/postgres.ts, with group commit) behind the Appender
// interface, on the PostgreSQL at `databaseUrl` (the machine's server, or an embedded PostgreSQL
// the append scenario started: the same code path).
import { migrate, openDatabase, type Database } from '../../infra/db.ts';
import { systemClock } from '../../infra/clock.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { WrongExpectedVersion } from '../../infra/eventstore/types.ts';
import type { Appender } from '../lib/writers.ts';

export async function ourAppender(opts: { databaseUrl: string }): Promise<Appender & { db: Database; store: PostgresEventStore; close(): Promise<void> }> {
  const db = await openDatabase(opts);
  await migrate(db);
  const store = new PostgresEventStore(db, systemClock);
  return {
    db, store,
    async append(stream, expected, event) {
      try {
        const r = await store.append([{ streamId: stream, expectedVersion: expected, events: [event] }]);
        return r.versions[stream]!;
      } catch (err) {
        if (err instanceof WrongExpectedVersion) return 'conflict';
        throw err;
      }
    },
    async version(stream, known) {
      const newer = await store.readStream(stream, known + 1);
      return newer.length > 0 ? newer[newer.length - 1]!.version : known;
    },
    async close() {
      await store.close();
      await db.close();
    },
  };
}
