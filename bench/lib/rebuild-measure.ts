// One measured rebuild of the money projection on a bench database, then its ceiling: reading the
// same events alone, in the same batches (no replay can be faster). Run in a process of its own
// (bench/rebuild-profile.ts), as an operator's `npm run projections -- rebuild money` would be: the
// bench's own process has just generated the events, and its heap would be the rebuild's burden.
import { ourAppender } from '../ceilings/ours.ts';
import { REBUILD_BATCH_SIZE, rebuildProjection } from '../../projections/rebuild.ts';
import { moneyProjection } from '../../projections/money.ts';

export interface RebuildMeasure {
  projection: string;
  events: number;
  elapsedMs: number;
  /** Until every event was replayed into the shadow (the rest is indexes, statistics and the swap). */
  replayMs: number;
  /** Reading the events alone, events/s. */
  readEps: number;
}

export async function measureRebuild(databaseUrl: string): Promise<RebuildMeasure> {
  const ours = await ourAppender({ databaseUrl });
  try {
    const t0 = performance.now();
    let replayMs = 0;
    const r = await rebuildProjection(ours.db.knex, ours.store, moneyProjection, (done, total) => {
      if (done >= total && done > 0 && !replayMs) replayMs = performance.now() - t0;
    });
    const readStarted = performance.now();
    let read = 0;
    for (let after = 0n; ;) {
      const batch = await ours.store.readAll(after, REBUILD_BATCH_SIZE, { metadata: false }); // as the replay reads
      if (batch.length === 0) break;
      read += batch.length;
      after = batch[batch.length - 1]!.position;
    }
    const readEps = (read * 1000) / (performance.now() - readStarted);
    return { projection: r.projection, events: r.events, elapsedMs: r.elapsedMs, replayMs, readEps };
  } finally {
    await ours.close();
  }
}
