// round-trips (issue 44 point 2): the SQL statements and commits each unit of work costs, counted
// exactly (bench/lib/statement-log.ts): per quote + payin pair created (64 connections, each with
// Idempotency-Keys, the sandbox
// holding every payin pending), per payin settled (the same load with the sandbox settling at once,
// less the first), and per transfer created and completed (20/s, webhooks to a local receiver).
// Requests and the background work they set off together; the merchant's setup is not counted.
import pg from 'pg';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase, type BenchDatabase } from '../lib/database.ts';
import { startService, type Service } from '../lib/service.ts';
import { asMerchant, createPayin, newMerchant, TRANSFER_CORRIDORS, transferBody, transferQuoteBody } from '../lib/api.ts';
import { startReceiver } from '../lib/receiver.ts';
import { CONNECTIONS } from './payin-create.ts';
import { BENCH_MARK, commitsOf, countSince, logEveryStatement, logMark } from '../lib/statement-log.ts';
import { round } from '../lib/stats.ts';

/** How long a backend may keep its counts before reporting them to pg_stat_database (PostgreSQL's idle flush, 10 s), and a margin. */
const STATS_FLUSH_MS = 11_000;

interface Counted {
  /** The work's statements: all those sent while it ran, less what the service sends idle in as long. */
  statements: number;
  rawStatements: number;
  idlePerSecond: number;
  commits: number;
  top: Array<[string, number]>;
}

/** The bench's own statements on the bench database (commitsOf's and untilCount's), each a transaction. */
let benchQueries = 0;

/** Polls `sql` (a count; BENCH_MARK makes the log count skip it) on the bench database until it reaches `n`. */
async function untilCount(url: string, sql: string, n: number, what: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let i = 0; i < 1200; i++) {
      benchQueries++;
      if (Number((await c.query<{ n: string }>(`${sql} ${BENCH_MARK}`)).rows[0]!.n) >= n) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`round-trips: ${what} never reached ${n}`);
  } finally {
    await c.end();
  }
}

/**
 * Starts the service on a fresh database that logs every statement, runs `setup` (not counted),
 * then `work` (counted, with what it sets off, until the service stops).
 */
async function counted(env: Record<string, string>, setup: (svc: Service, db: BenchDatabase) => Promise<() => Promise<void>>): Promise<Counted> {
  const db = await createDatabase('trips');
  try {
    await logEveryStatement(db.url, db.name);
    const svc = await startService({ databaseUrl: db.url, label: 'round-trips', env });
    let mark: number;
    let commits0: number;
    let ownBefore: number;
    let idle: number;
    let workMs: number;
    try {
      const work = await setup(svc, db);
      // The wait also measures what the service sends when nothing happens (its pollers), per second.
      const idleMark = logMark();
      await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
      mark = logMark();
      idle = countSince(idleMark, db.name, mark).total / (STATS_FLUSH_MS / 1000);
      ownBefore = benchQueries;
      benchQueries++;
      commits0 = await commitsOf(db.url, db.name);
      const t0 = Date.now();
      await work();
      workMs = Date.now() - t0;
    } finally {
      await svc.stop();
    }
    // The service's backends have ended: each reported its commits as it went. Less the bench's own
    // looks at the database (each a one-statement transaction, marked so that the log count skips
    // them; the last look's own is not in what it reads).
    const commits = (await commitsOf(db.url, db.name)) - commits0 - (benchQueries - ownBefore);
    const counts = countSince(mark, db.name);
    // The pollers' statements come with time, not with work: a slower machine sends more of them.
    const polling = Math.round(idle * (workMs / 1000));
    // Each of the pollers' statements is a transaction of its own: as many commits come with time too.
    return { statements: counts.total - polling, rawStatements: counts.total, idlePerSecond: round(idle), commits: commits - polling, top: counts.byStatement.slice(0, 12) };
  } finally {
    await db.drop();
  }
}

/** `pairs` quote + payin pairs at 64 connections; settled: also until every payin is final. */
const payinPairs = (pairs: number, settled: boolean) => async (svc: Service, db: BenchDatabase) => {
  const m = await newMerchant(svc.url, 'Round trips');
  await createPayin(svc.url, m);
  return async () => {
    // Whole pairs, each connection its share one after the other (a load generator's request budget
    // would end some connections between a quote and its payin).
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      for (let i = 0; i < pairs / CONNECTIONS; i++) await createPayin(svc.url, m);
    }));
    if (settled) await untilCount(db.url, `SELECT count(*) AS n FROM payins WHERE status <> 'pending'`, pairs + 1, 'settled payins');
    await new Promise((r2) => setTimeout(r2, 2000)); // the work that follows the last answer or settlement
  };
};

/** `n` transfers at 20/s from quotes made beforehand, until every one completed (its webhook received). */
const transfers = (n: number) => async (svc: Service, db: BenchDatabase) => {
  const rx = await startReceiver();
  const m = await newMerchant(svc.url, 'Round trips', { corridors: TRANSFER_CORRIDORS, topUp: { XOF: '1000000' }, topUps: Math.ceil((n + 10) / 900), webhookUrl: rx.url });
  const quotes: string[] = [];
  for (let i = 0; i < n; i++) quotes.push((await asMerchant(svc.url, m, 'POST', '/quotes/transfer', transferQuoteBody)).body.id);
  return async () => {
    const sent: Array<Promise<unknown>> = [];
    for (const q of quotes) {
      sent.push(asMerchant(svc.url, m, 'POST', '/transfers', transferBody(q, m.customerId)));
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(sent);
    await untilCount(db.url, `SELECT count(*) AS n FROM transfers WHERE status = 'completed'`, n, 'completed transfers');
    await new Promise((r) => setTimeout(r, 2000));
    await rx.close();
  };
};

const perUnit = (c: Counted, units: number) => ({
  statements: round(c.statements / units), commits: round(c.commits / units), rawStatements: round(c.rawStatements / units), idleStatementsPerSecond: c.idlePerSecond,
});
const topPerUnit = (c: Counted, units: number) => c.top.map(([sql, n]) => `${(n / units).toFixed(2)}  ${sql}`);

export async function roundTrips(profile: Profile): Promise<Record<string, ScenarioResult>> {
  const pairs = CONNECTIONS * (profile.name === 'smoke' ? 1 : 5);
  const transferCount = profile.name === 'smoke' ? 5 : 100;
  const created = await counted({ SANDBOX_SETTLE_MS: '3600000' }, payinPairs(pairs, false));
  const settled = await counted({ SANDBOX_SETTLE_MS: '0' }, payinPairs(pairs, true));
  const moved = await counted({ SANDBOX_SETTLE_MS: '0' }, transfers(transferCount));
  const pair = perUnit(created, pairs);
  const settle = { statements: round((settled.statements - created.statements) / pairs), commits: round((settled.commits - created.commits) / pairs) };
  const transfer = perUnit(moved, transferCount);
  return {
    'round-trips pair': judge({
      value: pair.statements, unit: 'statements per quote + payin pair', target: { on: 'value', op: '<=', bound: 6 },
      details: { pairs, connections: CONNECTIONS, ...pair, top: topPerUnit(created, pairs) },
    }),
    'round-trips payin settled': judge({
      value: settle.statements, unit: 'statements per payin settled', details: { commitsPerPayin: settle.commits, topWithSettlement: topPerUnit(settled, pairs) },
    }),
    'round-trips transfer': judge({
      value: transfer.statements, unit: 'statements per transfer completed', details: { transfers: transferCount, ...transfer, top: topPerUnit(moved, transferCount) },
    }),
  };
}
