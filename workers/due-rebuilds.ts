// Read models whose rows a change of their view left stale (a migration lists them in
// `projection_rebuilds_due`, e.g. 028) are rebuilt from the events at the service's start, online
// (projections/rebuild.ts: the live tables answer until the rebuilt ones are swapped in), one at a
// time, in the background. One process does it: the others see the lock taken and leave it. A
// rebuild cut short (a stop, a crash) leaves its row, and the next start does it again.
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import type { Projection } from '../projections/projection.ts';

/** The advisory lock class of the due rebuilds (one process at a time). */
const DUE_REBUILDS_LOCK = 7_201_602;

async function rebuildDue(s: Services, projections: Projection[], stopped: () => boolean): Promise<void> {
  await s.knex.transaction(async (trx) => {
    const locked = (await trx.raw<{ rows: Array<{ ok: boolean }> }>('SELECT pg_try_advisory_xact_lock(?) AS ok', [DUE_REBUILDS_LOCK])).rows[0]!.ok;
    if (!locked) return;
    const due = (await trx('projection_rebuilds_due').orderBy('created_at').select('name', 'reason')) as Array<{ name: string; reason: string }>;
    for (const { name, reason } of due) {
      if (stopped()) return;
      const projection = projections.find((p) => p.name === name);
      if (projection) {
        s.log.info({ projection: name, reason }, 'rebuilding a read model whose view changed');
        const r = await rebuildProjection(s.knex, s.store, projection);
        s.log.info({ projection: name, events: r.events, elapsed_ms: r.elapsedMs }, 'read model rebuilt');
      }
      await s.knex('projection_rebuilds_due').where({ name }).delete();
    }
  });
}

/** The worker, over the service's projections (the composition root's list). */
export function makeDueRebuilds(projections: () => Projection[]): Worker {
  return {
    name: 'due-rebuilds',
    async start(s: Services) {
      let stopped = false;
      const running = rebuildDue(s, projections(), () => stopped)
        .catch((err: unknown) => { if (!stopped) s.log.error({ err }, 'a due read-model rebuild failed: it runs again at the next start'); });
      return async () => {
        stopped = true;
        // A rebuild under way is left to end with the process (its shadow tables are dropped, or redone next time).
        void running;
      };
    },
  };
}
