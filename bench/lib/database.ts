// A fresh PostgreSQL database for one bench run (bench_<random>), dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const BASE_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: BASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Waits (up to 10 s) for the connections to `name` to end before it is dropped: a pool whose close
 * resolved before its sockets did (the Emmett peer's, under CI's load) would otherwise have its idle
 * client terminated by the FORCE, and that client's error, which nothing listens to, ended the bench
 * run ("terminating connection due to administrator command", CI at eb24581). FORCE stays for a
 * connection that never ends.
 */
async function untilNoConnections(c: pg.Client, name: string): Promise<void> {
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const r = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    if (r.rows[0]!.n === 0) return;
  }
}

export async function createDatabase(prefix = 'bench'): Promise<BenchDatabase> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // BENCH_KEEP_DB=1 keeps it for a look afterwards (its name is printed).
    drop: async () => {
      if (process.env.BENCH_KEEP_DB) return void process.stderr.write(`kept database ${name}\n`);
      await admin(async (c) => {
        await untilNoConnections(c, name);
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}

export async function postgresVersion(): Promise<string> {
  return admin(async (c) => (await c.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v);
}
