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

export class Projector {
  private subs: Subscription[] = [];
  private readonly positions = new Map<string, bigint>();
  private waiters: Array<{ position: bigint; resolve: () => void }> = [];

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    readonly projections: Projection[],
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    for (const p of this.projections) {
      const after = await readCheckpoint(this.knex, p.name);
      this.positions.set(p.name, after);
      this.subs.push(this.store.subscribe({
        after,
        batchSize: BATCH_SIZE,
        handler: async (events) => {
          const at = await applyBatch(this.knex, p, events);
          const last = events[events.length - 1]!.position;
          this.advance(p.name, at > last ? at : last);
        },
        onError: (err) => this.log.error({ err, projection: p.name }, 'projection batch failed; retrying'),
      }));
    }
  }

  private advance(name: string, position: bigint): void {
    this.positions.set(name, position);
    const min = this.minPosition();
    this.waiters = this.waiters.filter((w) => {
      if (w.position <= min) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  private minPosition(): bigint {
    let min: bigint | undefined;
    for (const v of this.positions.values()) if (min === undefined || v < min) min = v;
    return min ?? 0n;
  }

  /** Read-your-writes: resolves once every read model includes `position` (or after timeoutMs). */
  waitFor(position: bigint, timeoutMs = 5000): Promise<boolean> {
    if (this.minPosition() >= position) return Promise.resolve(true);
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
    await Promise.all(this.subs.map((s) => s.stop()));
    this.subs = [];
  }
}
