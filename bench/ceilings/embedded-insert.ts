// The embedded append ceiling: single-row INSERTs into the embedded PostgreSQL our store appends to
// in the same run, one prepared INSERT per transaction from `clients` connections at once, each
// looping on its own (what pgbench -c N -M prepared does on the machine's PostgreSQL, here from
// Node so that it needs no pgbench binary of the embedded server's version).
import pg from 'pg';
import { sampleEvent } from '../lib/writers.ts';

export async function embeddedInsert(url: string, clients: number, seconds: number): Promise<number> {
  const conns: pg.Client[] = [];
  try {
    for (let c = 0; c < clients; c++) {
      const conn = new pg.Client({ connectionString: url });
      conns.push(conn);
      await conn.connect();
    }
    await conns[0]!.query(`CREATE TABLE IF NOT EXISTS pgbench_events (
      global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version int NOT NULL, event_id uuid NOT NULL,
      type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL, created_at timestamptz NOT NULL)`);
    const data = JSON.stringify(sampleEvent(1).data);
    const end = Date.now() + seconds * 1000;
    let n = 0;
    const started = performance.now();
    await Promise.all(conns.map(async (conn, c) => {
      while (Date.now() < end) {
        await conn.query({
          name: 'embedded-insert',
          text: `INSERT INTO pgbench_events (stream_id, stream_version, event_id, type, data, metadata, created_at)
                 VALUES ($1, 1, gen_random_uuid(), 'payin.created', $2::jsonb, '{}'::jsonb, now())`,
          values: [`s-${c}`, data],
        });
        n++;
      }
    }));
    return (n * 1000) / (performance.now() - started);
  } finally {
    await Promise.all(conns.map((conn) => conn.end().catch(() => undefined)));
  }
}
