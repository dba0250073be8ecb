// The append ceiling: pgbench (PostgreSQL's own load tool) doing one single-row INSERT per
// transaction into a table shaped like `events`, at the same concurrency, on the same database.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { sampleEvent } from '../lib/writers.ts';

const run = promisify(execFile);
export const PGBENCH = process.env.PGBENCH || '/usr/bin/pgbench';

export async function pgbenchInsert(url: string, clients: number, seconds: number): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`CREATE TABLE IF NOT EXISTS pgbench_events (
    global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version int NOT NULL, event_id uuid NOT NULL,
    type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL, created_at timestamptz NOT NULL)`);
  await c.end();
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pgbench-')), 'insert.sql');
  const data = JSON.stringify(sampleEvent(1).data).replace(/'/g, "''");
  fs.writeFileSync(script, `INSERT INTO pgbench_events (stream_id, stream_version, event_id, type, data, metadata, created_at)
VALUES ('s-' || :client_id, 1, gen_random_uuid(), 'payin.created', '${data}'::jsonb, '{}'::jsonb, now());\n`);
  const u = new URL(url);
  const { stdout } = await run(PGBENCH, [
    '-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(clients, os.cpus().length)), '-T', String(seconds), '-f', script,
    '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'), u.pathname.slice(1),
  ], { env: { ...process.env, ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) } });
  fs.rmSync(path.dirname(script), { recursive: true, force: true });
  const m = /tps = ([0-9.]+) \(without initial connection time\)/.exec(stdout);
  if (!m) throw new Error(`pgbench output not understood:\n${stdout}`);
  return Number(m[1]);
}
