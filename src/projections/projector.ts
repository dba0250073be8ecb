// Runs projections: one catch-up subscription each, applying batches in a transaction together
// with the checkpoint (SELECT … FOR UPDATE, so two processes running the same projection take turns
// and the second skips what the first applied).
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent, Subscription } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';

const BATCH_SIZE = 1000;

export async function readCheckpoint(knex: Knex | Knex.Transaction, name: string, forUpdate = false): Promise<bigint> {
  await knex.raw('INSERT INTO checkpoints (name, position) VALUES (?, 0) ON CONFLICT (name) DO NOTHING', [name]);
  const r = await knex.raw<{ rows: Array<{ position: string }> }>(
    `SELECT position FROM checkpoints WHERE name = ?${forUpdate ? ' FOR UPDATE' : ''}`,
    [name],
  );
  return BigInt(r.rows[0]!.position);
}

export async function writeCheckpoint(knex: Knex | Knex.Transaction, name: string, position: bigint): Promise<void> {
  await knex.raw('UPDATE checkpoints SET position = ?, updated_at = now() WHERE name = ?', [position.toString(), name]);
}

/** Applies one batch with its checkpoint; returns the checkpoint after it. */
export async function applyBatch(knex: Knex, projection: Projection, events: RecordedEvent[]): Promise<bigint> {
  return knex.transaction(async (tx) => {
    const at = await readCheckpoint(tx, projection.name, true);
    const fresh = events.filter((e) => e.position > at);
    if (fresh.length === 0) return at;
    await projection.apply(tx, fresh);
    const last = fresh[fresh.length - 1]!.position;
    await writeCheckpoint(tx, projection.name, last);
    return last;
  });
}

/** Applies one batch to several projections in one transaction, each behind its own checkpoint. */
export async function applyBatchToAll(knex: Knex, projections: Projection[], events: RecordedEvent[]): Promise<void> {
  await knex.transaction(async (tx) => {
    for (const projection of projections) {
      const at = await readCheckpoint(tx, projection.name, true);
      const fresh = events.filter((e) => e.position > at);
      if (fresh.length === 0) continue;
      await projection.apply(tx, fresh);
      await writeCheckpoint(tx, projection.name, fresh[fresh.length - 1]!.position);
    }
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

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    readonly projections: Projection[],
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    let after: bigint | undefined;
    for (const p of this.projections) {
      const at = await readCheckpoint(this.knex, p.name);
      if (after === undefined || at < after) after = at;
    }
    this.position = after ?? 0n;
    this.sub = this.store.subscribe({
      after: this.position,
      batchSize: BATCH_SIZE,
      handler: async (events) => {
        await applyBatchToAll(this.knex, this.projections, events);
        this.advance(events[events.length - 1]!.position);
      },
      onError: (err) => this.log.error({ err }, 'projection batch failed; retrying'),
    });
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
