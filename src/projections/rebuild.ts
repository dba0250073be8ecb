// Rebuilding a read model from the event store, and how far behind each one is. Used by the
// `npm run projections` CLI (src/cli/projections.ts) while the service is stopped.
import type { Knex } from 'knex';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { readCheckpoint, writeCheckpoint } from './projector.ts';

export const REBUILD_BATCH_SIZE = 1000;

/** `done` of `total` events replayed so far (`total` grows if events are appended meanwhile). */
export type RebuildProgress = (done: number, total: number) => void;

export interface RebuildResult {
  projection: string;
  /** Events replayed (every event of the global order, whichever streams the projection reads). */
  events: number;
  /** The checkpoint the projection ends at. */
  position: bigint;
  elapsedMs: number;
}

/** Something else moved the projection's checkpoint during the rebuild: a running service. */
export class ConcurrentProjectionWriter extends Error {
  constructor(projection: string, expected: bigint, found: bigint) {
    super(
      `the checkpoint of projection "${projection}" moved to ${found} while the rebuild had it at ${expected}: ` +
      'another process (a running service) is applying events to it. Stop the service and rebuild again.',
    );
    this.name = 'ConcurrentProjectionWriter';
  }
}

/**
 * Events in (after, upTo] of the global order. The PostgreSQL event store keeps them in this same
 * database (table `events`), where one query counts them; another store (KurrentDB, whose positions
 * are not event numbers) is read through and counted.
 */
export async function countEvents(
  knex: Knex, store: EventStore, after: bigint, upTo: bigint, pageSize = REBUILD_BATCH_SIZE,
): Promise<number> {
  if (upTo <= after) return 0;
  if (store.name === 'postgres' || store.name === 'pglite') {
    const r = await knex.raw<{ rows: Array<{ n: string | number }> }>(
      'SELECT count(*) AS n FROM events WHERE global_position > ? AND global_position <= ?',
      [after.toString(), upTo.toString()],
    );
    return Number(r.rows[0]!.n);
  }
  let count = 0;
  let position = after;
  for (;;) {
    const batch = await store.readAll(position, pageSize);
    const within = batch.filter((e) => e.position <= upTo);
    count += within.length;
    if (within.length < pageSize) return count;
    position = within[within.length - 1]!.position;
  }
}

/**
 * Empties `projection`'s tables and checkpoint, then replays the whole global order into it in
 * batches: each batch's rows and the checkpoint after it are written in one transaction (as the
 * projector does), so an interrupted rebuild resumes correctly when the service starts again.
 * Each batch checks that the checkpoint is still where the rebuild left it, and stops with
 * ConcurrentProjectionWriter when a running service moved it. Events appended during the rebuild
 * are replayed too: it ends when the store has nothing newer.
 */
export async function rebuildProjection(
  knex: Knex,
  store: EventStore,
  projection: Projection,
  onProgress: RebuildProgress = () => undefined,
  batchSize = REBUILD_BATCH_SIZE,
): Promise<RebuildResult> {
  const started = Date.now();
  let total = await countEvents(knex, store, 0n, await store.head());

  await knex.transaction(async (tx) => {
    await readCheckpoint(tx, projection.name, true);
    if (projection.tables.length > 0) {
      await tx.raw(`TRUNCATE TABLE ${projection.tables.map(() => '??').join(', ')}`, projection.tables);
    }
    await writeCheckpoint(tx, projection.name, 0n);
  });
  onProgress(0, total);

  let position = 0n;
  let done = 0;
  for (;;) {
    const batch = await store.readAll(position, batchSize);
    if (batch.length === 0) break;
    const last = batch[batch.length - 1]!.position;
    await knex.transaction(async (tx) => {
      const at = await readCheckpoint(tx, projection.name, true);
      if (at !== position) throw new ConcurrentProjectionWriter(projection.name, position, at);
      await projection.apply(tx, batch);
      await writeCheckpoint(tx, projection.name, last);
    });
    position = last;
    done += batch.length;
    if (done > total) total = done;
    onProgress(done, total);
  }
  onProgress(done, done);
  return { projection: projection.name, events: done, position, elapsedMs: Date.now() - started };
}

export interface ProjectionStatus {
  projection: string;
  checkpoint: bigint;
  head: bigint;
  /** Events the projection has not applied yet. */
  lag: number;
}

/** Each projection's checkpoint against the store's head. */
export async function projectionStatus(knex: Knex, store: EventStore, projections: Projection[]): Promise<ProjectionStatus[]> {
  const head = await store.head();
  const out: ProjectionStatus[] = [];
  for (const p of projections) {
    const checkpoint = await readCheckpoint(knex, p.name);
    out.push({ projection: p.name, checkpoint, head, lag: await countEvents(knex, store, checkpoint, head) });
  }
  return out;
}
