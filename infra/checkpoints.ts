// The checkpoints table: how far a reader of the event store's global order has gone (each
// projection, the event forwarder), kept by name.
import type { Knex } from 'knex';

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

/** Creates the checkpoint rows that do not exist yet (at 0). */
export async function ensureCheckpoints(knex: Knex | Knex.Transaction, names: string[]): Promise<void> {
  await knex.raw('INSERT INTO checkpoints (name, position) SELECT unnest(?::text[]), 0 ON CONFLICT (name) DO NOTHING', [names]);
}
