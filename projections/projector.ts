// Runs projections: one catch-up subscription each, applying batches in a transaction together
// with the checkpoint (SELECT … FOR UPDATE, so two processes running the same projection take turns
// and the second skips what the first applied). On PostgreSQL a batch first tries to go as one
// statement on the checkpoints this projector last committed (one-statement-batch.ts).
import { ensureCheckpoints, readCheckpoint } from '../infra/checkpoints.ts';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent, Subscription } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { ROW_CACHE_LIMIT, RowCache } from './row-cache.ts';
import { historyOf, type StreamHistory } from './history.ts';
import { applyInOneStatement } from './one-statement-batch.ts';

const BATCH_SIZE = 1000;


/**
 * Applies one batch to several projections in one transaction, each behind its own checkpoint:
 * one statement locks and reads every checkpoint, one moves those that advanced (not three per
 * projection: the projector runs once per group commit, and read-your-writes waits on it).
 */
export async function applyBatchToAll(knex: Knex, projections: Projection[], events: RecordedEvent[],
  history: StreamHistory, caches?: Map<string, RowCache>): Promise<Map<string, bigint>> {
  const moved: Array<[string, bigint]> = [];
  let positions: Map<string, bigint>;
  try {
    positions = await applyInOneTransaction(knex, projections, events, history, moved, caches);
  } catch (err) {
    for (const c of caches?.values() ?? []) c.reset();
    throw err;
  }
  for (const [name, position] of moved) {
    caches?.get(name)?.commit(position);
    positions.set(name, position);
  }
  return positions;
}

/** Returns each checkpoint as the lock found it (the caller adds those the batch moved). */
async function applyInOneTransaction(knex: Knex, projections: Projection[], events: RecordedEvent[], history: StreamHistory,
  moved: Array<[string, bigint]>, caches: Map<string, RowCache> | undefined): Promise<Map<string, bigint>> {
  return knex.transaction(async (tx) => {
    const names = projections.map((p) => p.name);
    const lock = () => tx.raw<{ rows: Array<{ name: string; position: string }> }>(
      'SELECT name, position FROM checkpoints WHERE name = ANY(?::text[]) ORDER BY name FOR UPDATE', [names]);
    let rows = (await lock()).rows;
    if (rows.length < names.length) { // a checkpoint row removed under us (never expected): recreate it
      await ensureCheckpoints(tx, names);
      rows = (await lock()).rows;
    }
    const at = new Map(rows.map((r) => [r.name, BigInt(r.position)]));
    for (const projection of projections) {
      const fresh = events.filter((e) => e.position > at.get(projection.name)!);
      if (fresh.length === 0) continue;
      const cache = caches?.get(projection.name);
      cache?.begin(at.get(projection.name)!);
      await projection.apply(tx, fresh, { history, rows: cache });
      moved.push([projection.name, fresh[fresh.length - 1]!.position]);
    }
    if (moved.length === 0) return at;
    await tx.raw(
      `UPDATE checkpoints c SET position = m.position, updated_at = now()
       FROM unnest(?::text[], ?::bigint[]) AS m(name, position) WHERE c.name = m.name`,
      [moved.map(([n]) => n), moved.map(([, p]) => p.toString())],
    );
    return at;
  });
}

/**
 * Runs every projection from one subscription: one read of the global order per batch and one
 * transaction that moves every projection's checkpoint with its rows.
 */
export class Projector {
  private sub: Subscription | undefined;
  private position = 0n;
  private waiters: Array<{ position: bigint; resolve: () => void }> = [];
  private appliedListeners: Array<(events: RecordedEvent[]) => void> = [];
  private startListeners: Array<(after: bigint) => void> = [];
  /** Each projection's rows as this projector last wrote them (row-cache.ts). */
  private readonly rowCaches = new Map<string, RowCache>();
  /** Rows each projection keeps of its latest writes (cache-sizes.ts). */
  readonly rowsKept: number;
  private readonly history: StreamHistory;
  /** Each checkpoint as this projector last committed it (undefined: not known, read it under the lock). */
  private known: Map<string, bigint> | undefined;
  /**
   * A batch is one statement (one-statement-batch.ts): no BEGIN, lock, checkpoint UPDATE and COMMIT
   * of its own, each a round trip.
   */
  private readonly oneStatement: boolean;

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    readonly projections: Projection[],
    private readonly log: Logger,
    opts: { oneStatement?: boolean; rowsKept?: number } = {},
  ) {
    this.rowsKept = opts.rowsKept ?? ROW_CACHE_LIMIT;
    for (const p of projections) this.rowCaches.set(p.name, new RowCache(this.rowsKept));
    this.history = historyOf(store);
    this.oneStatement = opts.oneStatement ?? true;
  }

  async start(): Promise<void> {
    await ensureCheckpoints(this.knex, this.projections.map((p) => p.name));
    let after: bigint | undefined;
    for (const p of this.projections) {
      const at = await readCheckpoint(this.knex, p.name);
      if (after === undefined || at < after) after = at;
    }
    this.position = after ?? 0n;
    for (const listener of this.startListeners) listener(this.position);
    this.known = undefined; // read under the lock by the first batch
    this.sub = this.store.subscribe({
      after: this.position,
      batchSize: BATCH_SIZE,
      handler: async (events) => {
        // The batch as one statement on the checkpoints this projector last committed
        // (one-statement-batch.ts); the careful way, under the lock, when that cannot be.
        const quick = this.known && this.oneStatement
          ? await applyInOneStatement(this.knex, this.projections, events, this.history, this.rowCaches, this.known)
          : undefined;
        this.known = quick ?? await applyBatchToAll(this.knex, this.projections, events, this.history, this.rowCaches);
        // The read models include this batch now (applied here, or by another process first).
        for (const listener of this.appliedListeners) listener(events);
        this.advance(events[events.length - 1]!.position);
      },
      onError: (err) => this.log.error({ err }, 'projection batch failed; retrying'),
    });
  }

  /** Called as the projector starts, with the position it reads on from (its checkpoint). */
  onStarted(listener: (after: bigint) => void): void {
    this.startListeners.push(listener);
  }

  /** Called after each batch is in the read models, with its events (caches that derive from them). */
  onApplied(listener: (events: RecordedEvent[]) => void): void {
    this.appliedListeners.push(listener);
  }

  private advance(position: bigint): void {
    this.position = position;
    this.waiters = this.waiters.filter((w) => {
      if (w.position <= position) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /** Read-your-writes: resolves once every read model includes `position` (false after timeoutMs). */
  waitFor(position: bigint, timeoutMs = 5000): Promise<boolean> {
    if (this.position >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { position, resolve: () => { clearTimeout(timer); resolve(true); } };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = undefined;
  }
}
