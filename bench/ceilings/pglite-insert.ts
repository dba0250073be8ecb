// The embedded append ceiling: single-row INSERTs straight into PGlite (what pgbench does on
// PostgreSQL; pgbench cannot reach an in-process database), `clients` loops at once.
import type { Database } from '../../src/infra/db.ts';
import { sampleEvent } from '../lib/writers.ts';

export async function pgliteInsert(db: Database, clients: number, seconds: number): Promise<number> {
  await db.knex.raw(`CREATE TABLE IF NOT EXISTS pgbench_events (
    global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version int NOT NULL, event_id uuid NOT NULL,
    type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL, created_at timestamptz NOT NULL)`);
  const data = JSON.stringify(sampleEvent(1).data);
  const end = Date.now() + seconds * 1000;
  let n = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    while (Date.now() < end) {
      await db.knex.raw(
        `INSERT INTO pgbench_events (stream_id, stream_version, event_id, type, data, metadata, created_at)
         VALUES (?, 1, gen_random_uuid(), 'payin.created', ?::jsonb, '{}'::jsonb, now())`, [`s-${c}`, data]);
      n++;
    }
  }));
  return (n * 1000) / (performance.now() - started);
}
