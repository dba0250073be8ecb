// Exact round-trip counts (issue 44 point 2): every SQL statement the service sends to one bench
// database, read from PostgreSQL's own log (`log_statement = 'all'` set on that database only), and
// its commits from pg_stat_database. Counts, unlike times, do not drift with the machine's load.
// The log is this machine's PostgreSQL's (PG_LOG, default the Debian cluster's file); the bench runs
// as a user who may read it.
import fs from 'node:fs';
import pg from 'pg';

export const PG_LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
/** Ends the bench's own statements on a counted database: the count skips them. */
export const BENCH_MARK = '/* bench: not counted */';

/** Logs every statement sent to the database from the next connection on (set before the service connects). */
export async function logEveryStatement(url: string, name: string): Promise<void> {
  if (!fs.existsSync(PG_LOG)) throw new Error(`PostgreSQL's log ${PG_LOG} is not readable here (PG_LOG names it)`);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`ALTER DATABASE ${name} SET log_statement = 'all'`);
  } finally {
    await c.end();
  }
}

/** The database's committed transactions so far (its backends report theirs when they end, and within 10 s of going idle). */
export async function commitsOf(url: string, name: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1 ${BENCH_MARK}`, [name]);
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}

export interface StatementCounts {
  total: number;
  /** Each statement's text, numbers and literals masked, and how many times it was sent. */
  byStatement: Array<[string, number]>;
}

/** Where the log ends now: statements logged after it are counted by `countSince`. */
export const logMark = (): number => fs.statSync(PG_LOG).size;

/** The statements logged for the database since `mark` (until `end`, a later mark, or now), grouped by their text. */
export function countSince(mark: number, name: string, end?: number): StatementCounts {
  const fd = fs.openSync(PG_LOG, 'r');
  let text: string;
  try {
    const size = end ?? fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - mark));
    fs.readSync(fd, buf, 0, buf.length, mark);
    text = buf.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.includes(`@${name} `) || line.includes(BENCH_MARK)) continue;
    const m = /(?:statement|execute [^:]*): (.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.replace(/\$\d+/g, '$').replace(/'[^']*'/g, "'…'").slice(0, 110);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const byStatement = [...counts].sort((a, b) => b[1] - a[1]);
  return { total: byStatement.reduce((a, [, n]) => a + n, 0), byStatement };
}
