// The append peer: Emmett's PostgreSQL event store (@event-driven-io/emmett-postgresql, a dev
// dependency used only here) on the same database, behind the bench's Appender interface.
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import type { Appender } from '../lib/writers.ts';

export function emmettAppender(url: string): Appender & { close(): Promise<void> } {
  const store = getPostgreSQLEventStore(url);
  return {
    async append(stream, expected, event) {
      try {
        const r = await store.appendToStream(stream, [event], { expectedStreamVersion: expected === 0 ? 'STREAM_DOES_NOT_EXIST' : BigInt(expected) });
        return Number(r.nextExpectedStreamVersion);
      } catch (err) {
        if ((err as { errorCode?: number }).errorCode === 412 || (err as Error).name === 'ExpectedVersionConflictError' || /expected version/i.test((err as Error).message)) return 'conflict';
        throw err;
      }
    },
    async version(stream, known) {
      const r = await store.readStream(stream, { from: BigInt(known + 1) });
      return Number(r.currentStreamVersion);
    },
    close: () => store.close(),
  };
}
