// Rebuilding a read model from the event store, and how far behind each one is. Used by the
// `npm run projections` CLI (cli/projections.ts) and the operator API, while the service runs.
//
// Online: the rebuild replays every event into shadow copies of the projection's tables
// (projections/shadow.ts) while the service keeps answering from, and the projector keeps applying
// to, the live tables. Once the shadow has caught up with the store, one transaction swaps it in:
// it locks the projection's checkpoint (the projector waits on that lock, readers never do); if the
// live projection got ahead of the shadow meanwhile, it lets go, the shadow catches up, and the swap
// is tried again; else it puts the shadow tables in place of the live ones (projections/swap.ts: it
// moves them in, their secondary indexes, grants and statistics prepared beforehand, under a lock
// that holds readers for milliseconds; or, for tables a move would not carry over, replaces the
// rows by DELETE + INSERT … SELECT. Either way readers see the old rows until the commit and the new
// ones after, never an empty or half-built table, and the live tables keep their names, columns,
// constraints, indexes, storage settings and grants) and sets the checkpoint to the shadow's
// position. Then the shadow is dropped.
import type { Knex } from 'knex';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { readCheckpoint, writeCheckpoint } from '../infra/checkpoints.ts';
import { catchUp, claim, createShadow, dropShadow } from './shadow.ts';
import { copyIn, moveIn, prepareMove } from './swap.ts';
import { keepsEventsInThisDatabase } from './history.ts';

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Events per replayed batch (one transaction each): large, so a stream rarely spans two and the
 * statements per event are few (10,000 replayed 200k events in ~12 s where 5,000 took ~14 s).
 */
export const REBUILD_BATCH_SIZE = 10_000;
/** Swaps tried before giving up on a live projection that keeps getting ahead of the rebuilt one. */
const MAX_SWAP_ATTEMPTS = 50;
/**
 * How long a swap that moves tables waits for their ACCESS EXCLUSIVE lock (behind a long read, which
 * every later reader would queue behind) before letting go and trying again.
 */
const SWAP_LOCK_TIMEOUT = '2s';

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

/**
 * Events in (after, upTo] of the global order. The PostgreSQL event store keeps them in this same
 * database (table `events`), where one query counts them; another store (KurrentDB, whose positions
 * are not event numbers) is read through and counted.
 */
export async function countEvents(
  knex: Knex, store: EventStore, after: bigint, upTo: bigint, pageSize = REBUILD_BATCH_SIZE,
): Promise<number> {
  if (upTo <= after) return 0;
  if (keepsEventsInThisDatabase(store)) {
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
 * Every event in the store, for a rebuild's progress report. A store in this database keeps one row
 * per stream with its version, and the versions add up to the events (counting the events reads the
 * whole table: 0.13 to 0.5 s for 200,000 events, bench issue 8). Events appended meanwhile may be
 * counted or not; the report's total grows with the replay either way.
 */
async function eventsToReplay(knex: Knex, store: EventStore): Promise<number> {
  if (!keepsEventsInThisDatabase(store)) return countEvents(knex, store, 0n, await store.head());
  const r = await knex.raw<{ rows: Array<{ n: string | number | null }> }>('SELECT sum(version) AS n FROM streams');
  return Number(r.rows[0]!.n ?? 0);
}

/**
 * Rebuilds `projection` online (see the header): replays the whole global order into shadow tables
 * in batches, reporting progress after each, then swaps them in with the checkpoint. Events appended
 * during the rebuild are replayed too. An interrupted rebuild leaves the live tables as they were
 * (the next rebuild starts its shadow afresh).
 */
export async function rebuildProjection(
  knex: Knex,
  store: EventStore,
  projection: Projection,
  onProgress: RebuildProgress = () => undefined,
  batchSize = REBUILD_BATCH_SIZE,
): Promise<RebuildResult> {
  const started = Date.now();
  let total = await eventsToReplay(knex, store);
  const shadow = await createShadow(knex, projection, 'rebuild');
  try {
    onProgress(0, total);
    let done = 0;
    const progress = (n: number) => {
      done += n;
      if (done > total) total = done;
      onProgress(done, total);
    };
    await catchUp(knex, store, shadow, undefined, batchSize, progress);
    // Outside the lock: the indexes and statistics the live tables have (their building is the long part).
    const movable = await prepareMove(knex, shadow);
    for (let attempt = 1; ; attempt++) {
      await catchUp(knex, store, shadow, undefined, batchSize, progress);
      // The swap, under the projection's checkpoint lock. If the live projection is ahead of the
      // shadow (it applied events the shadow has not read yet), catch up outside the lock and try
      // again: the store is never read inside this transaction (its lock is held briefly).
      const swapped = await knex.transaction(async (tx) => {
        if (movable) await tx.raw(`SET LOCAL lock_timeout = '${SWAP_LOCK_TIMEOUT}'`);
        const live = await readCheckpoint(tx, projection.name, true);
        if (live > shadow.position) return undefined;
        await claim(tx, shadow);
        if (!movable || !(await moveIn(tx, shadow))) await copyIn(tx, shadow);
        // Ahead of the live projector (it had not applied the newest events yet): it skips them
        // for this projection, which has them already.
        await writeCheckpoint(tx, projection.name, shadow.position);
        return shadow.position;
      }).catch((err: unknown) => {
        if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return undefined;
        throw err;
      });
      if (swapped !== undefined) {
        onProgress(done, done);
        return { projection: projection.name, events: done, position: swapped, elapsedMs: Date.now() - started };
      }
      if (attempt >= MAX_SWAP_ATTEMPTS) {
        throw new Error(`rebuild of ${projection.name}: the live projection kept moving ahead of the rebuilt one (${attempt} attempts)`);
      }
    }
  } finally {
    await dropShadow(knex, shadow).catch(() => undefined);
  }
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
