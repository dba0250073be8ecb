// payin-create: quote + payin over HTTP at 64 connections against the service (real PostgreSQL and
// NATS), side by side with the ceiling for one durable write through Express (a bare Express 5
// handler doing one pg INSERT, bench/ceilings/express-insert.ts) at the same 64 connections.
// Also the memory figure: the service's peak RSS over its life, which this load dominates.
// Embedded (no DATABASE_URL): the service starts its own PostgreSQL under its DATA_DIR, and runs its
// bus in-process; the ceiling's Express writes to a database on an embedded PostgreSQL of its own
// (same binaries and settings, started after the service's has stopped, stopped after it), and
// the memory figure is the service's and its PostgreSQL processes' together.
//
// "creates/s" counts created resources: each pair is a quote (one durable append) and a payin (one
// durable append), the same unit of work as one ceiling INSERT; payins/s is half of it.
import { randomUUID } from 'node:crypto';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { cpuMsOf, startService, type ServiceMemory } from '../lib/service.ts';
import { startHttpChild } from '../lib/child.ts';
import { serverCpuClock, withEmbeddedDatabase } from '../lib/embedded.ts';
import { load, type LoadResult } from '../lib/load.ts';
import { createPayin, merchantHeaders, newMerchant, payinBody, payinQuoteBody, type Merchant } from '../lib/api.ts';
import { round } from '../lib/stats.ts';
import { settledOrThrow, untilSettled, type Drain } from '../lib/settled.ts';
import { meanMsBetween, routeTotals } from '../lib/route-latency.ts';

export const CONNECTIONS = 64;

type Ctx = { quoteId?: string };

export function payinRequests(m: Merchant) {
  const headers = { ...merchantHeaders(m), 'content-type': 'application/json' };
  return [
    {
      method: 'POST' as const, path: '/quotes/payin',
      setupRequest: (req: any) => ({ ...req, headers: { ...headers, 'idempotency-key': randomUUID() }, body: JSON.stringify({ customer_id: m.customerId, ...payinQuoteBody }) }),
      onResponse: (status: number, body: string, ctx: Ctx) => { ctx.quoteId = status === 201 ? JSON.parse(body).id : undefined; },
    },
    {
      method: 'POST' as const, path: '/payins',
      // No quote (its call failed): start the pair again.
      setupRequest: (req: any, ctx: Ctx) => (ctx.quoteId
        ? { ...req, headers: { ...headers, 'idempotency-key': randomUUID() }, body: JSON.stringify(payinBody(ctx.quoteId, m.customerId)) }
        : undefined),
    },
  ];
}

const insertRequests = [{
  method: 'POST' as const, path: '/items',
  setupRequest: (req: any) => ({ ...req, headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify({ customer_id: randomUUID(), ...payinQuoteBody }) }),
}];

const summary = (r: LoadResult) => ({
  okPerSecond: round(r.okPerSecond), p50Ms: r.p50, p99Ms: r.p99, requests: r.requests, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, statusCodes: r.statusCodes,
});

/**
 * `embedded`: the service with no DATABASE_URL (its own PostgreSQL, the in-process bus), against
 * Express + one pg INSERT into a database on an embedded PostgreSQL.
 */
export async function payinCreate(profile: Profile, opts: { nodeArgs?: string[]; embedded?: boolean } = {}): Promise<Record<string, ScenarioResult>> {
  const db = opts.embedded ? undefined : await createDatabase();
  let ours: LoadResult;
  let memory: ServiceMemory;
  let cpuMsPerPair = Number.NaN;
  let postgresCpuMsPerPair: number | null = null;
  let natsCpuMsPerPair: number | null = null;
  let drain: Drain | undefined;
  let routeMeanMs: Record<string, number> = {};
  let ceiling: LoadResult;
  // The ceiling's CPU per create, its process's and its PostgreSQL's (when that server is on this
  // machine): the ratio of creates/s follows the whole machine's CPU per create (bench/PROFILE.md §33).
  let ceilingCpu: { processMsPerCreate: number; postgresMsPerCreate: number | null } | undefined;
  const runCeiling = async (url: string) => {
    const ceil = await startHttpChild('bench/ceilings/express-insert.ts', { DATABASE_URL: url }, 'express-insert');
    try {
      await load({ url: ceil.url, connections: CONNECTIONS, seconds: profile.warmupSeconds, requests: insertRequests as any });
      const pgClock = await serverCpuClock(url);
      const cpu0 = cpuMsOf(ceil.pid);
      const pg0 = pgClock?.();
      const r = await load({ url: ceil.url, connections: CONNECTIONS, seconds: profile.seconds, requests: insertRequests as any });
      const pg1 = pgClock?.();
      const perCreate = (ms: number) => (r.ok > 0 ? round(ms / r.ok, 3) : Number.NaN);
      ceilingCpu = {
        processMsPerCreate: perCreate(cpuMsOf(ceil.pid) - cpu0),
        postgresMsPerCreate: pg0 !== undefined && pg1 !== undefined ? perCreate(pg1 - pg0) : null,
      };
      return r;
    } finally {
      await ceil.stop();
    }
  };
  try {
    // Embedded, the service stops its PostgreSQL on SIGTERM (stop() stops it after a SIGKILL).
    const svc = await startService({ databaseUrl: db?.url, label: 'payin-create', ...(opts.nodeArgs ? { nodeArgs: opts.nodeArgs } : {}) });
    try {
      const m = await newMerchant(svc.url, 'Bench payins');
      await createPayin(svc.url, m); // the first request warms the routes' caches
      await load({ url: svc.url, connections: CONNECTIONS, seconds: profile.warmupSeconds, requests: payinRequests(m) as any });
      // The warm-up's payins settled first: their starts lag as the load's do, and their work must
      // not land in the measured window (it is divided by the load's pairs only).
      const settleLimitMs = Math.max(60_000, 3_000 * (profile.warmupSeconds + profile.seconds));
      const serviceDb = await svc.databaseUrl();
      settledOrThrow(await untilSettled(serviceDb, m.merchantId, settleLimitMs), 'warm-up');
      const cpu0 = svc.cpuMs();
      const pgCpu0 = svc.postgresCpuMs();
      const natsCpu0 = svc.natsCpuMs();
      const routes0 = await routeTotals(svc.url);
      ours = await load({ url: svc.url, connections: CONNECTIONS, seconds: profile.seconds, requests: payinRequests(m) as any });
      routeMeanMs = meanMsBetween(routes0, await routeTotals(svc.url));
      // The background work the load set off: every payin started at the sandbox and settled (2 s
      // after its start), however far the starts fell behind the creates.
      drain = settledOrThrow(await untilSettled(serviceDb, m.merchantId, settleLimitMs), 'load');
      // The service's CPU per quote + payin pair, requests and background work together: a figure
      // that a busy machine slows less than throughput (it counts work, not waiting). Its
      // PostgreSQL's CPU is apart (postgresCpuMsPerPair: embedded, its own server's; external, the
      // whole server's when it runs on this machine, null when it does not), as is the local NATS
      // server's (natsCpuMsPerPair).
      const perPair = (before: number | null, after: number | null, digits = 1) =>
        (before !== null && after !== null && ours.ok > 0 ? round((after - before) / (ours.ok / 2), digits) : null);
      cpuMsPerPair = perPair(cpu0, svc.cpuMs()) ?? Number.NaN;
      postgresCpuMsPerPair = perPair(pgCpu0, svc.postgresCpuMs(), 2);
      natsCpuMsPerPair = perPair(natsCpu0, svc.natsCpuMs(), 2);
      memory = svc.memory();
    } finally {
      await svc.stop();
    }
    ceiling = db ? await runCeiling(db.url) : await withEmbeddedDatabase('ceiling', runCeiling);
  } finally {
    await db?.drop();
  }
  const suffix = opts.embedded ? ' embedded' : '';
  const ceilingName = opts.embedded ? 'Express 5 + one pg INSERT into embedded PostgreSQL' : 'Express 5 + one pg INSERT';
  const details = { connections: CONNECTIONS, payinsPerSecond: round(ours.okPerSecond / 2), serviceCpuMsPerPair: cpuMsPerPair,
    postgresCpuMsPerPair, natsCpuMsPerPair, ceilingCpuMsPerCreate: ceilingCpu, drain,
    // Measured in the service, from a request's arrival to its response (the load generator's
    // figures also hold the time a request waits in the kernel's queues and in the generator).
    serviceMeanMsByRoute: routeMeanMs, service: summary(ours), ceiling: summary(ceiling) };
  return {
    [`payin-create${suffix}`]: judge({
      value: round(ours.okPerSecond), unit: 'creates/s', ceiling: round(ceiling.okPerSecond), ceilingName,
      target: { on: 'ratio', op: '>=', bound: 0.5 }, details,
    }),
    [`payin-create${suffix} p50`]: judge({ value: ours.p50, unit: 'ms', ceiling: ceiling.p50, ceilingName: `${ceilingName} (p50)` }),
    [`payin-create${suffix} p99`]: judge({
      value: ours.p99, unit: 'ms', ceiling: ceiling.p99, ceilingName: `${ceilingName} (p99)`,
      target: { on: 'value', op: '<=', bound: 100 }, details: { p50Ms: ours.p50, ceilingP50Ms: ceiling.p50 },
    }),
    // Issue 44: the service's CPU per quote + payin pair (requests and the background work they set
    // off) a third below the code the issue was filed on (fbe2683). Until 2026-12-07 the figure was
    // read 3 s after the load, when most payins had not settled yet (the bound was then 1.47 ms,
    // from 2.2); counted from a settled warm-up until every payin of the load settled, fbe2683
    // measured 2.8 to 3.7 ms, 3.1 on average over five runs (2026-12-07, 13:32 to 13:41,
    // bench/PROFILE.md §34): the bound is a third below that. Machine time, not a ratio: compare
    // runs of one hour (bench/HISTORY.md).
    ...(opts.embedded ? {} : {
      'payin-create CPU per pair': judge({ value: cpuMsPerPair, unit: 'ms of service CPU per quote + payin pair', target: { on: 'value', op: '<=', bound: 2.07 } }),
    }),
    // How far the background fell behind the requests: seconds from the load's end until every payin
    // had settled (the sandbox settles each 2 s after its start), and how many were waiting then.
    [`payin-create${suffix} drain`]: judge({
      value: drain!.seconds, unit: 's after the load until every payin settled',
      details: { pendingAtLoadEnd: drain!.pendingAtLoadEnd, pendingAtLimit: drain!.pendingAtLimit, payinsOfTheLoad: round(ours.ok / 2, 0) },
    }),
    // The whole work's pace: the load's payins over the load and its drain. Creates/s can be bought
    // by starting fewer legs during the load (the background's share of the loop goes to the
    // requests, the drain grows); this figure cannot, so a change is judged on both (PROFILE §36).
    [`payin-create${suffix} settled`]: judge({
      value: round(ours.ok / 2 / (profile.seconds + drain!.seconds)), unit: 'payins settled/s over the load and its drain',
    }),
    [`memory${suffix}`]: judge({
      value: round(memory.totalMb), unit: 'MB peak RSS', target: { on: 'value', op: '<=', bound: 300 },
      details: opts.embedded
        ? {
          during: 'payin-create embedded (the service process, VmHWM, whole life; plus its embedded PostgreSQL processes, the highest total PSS seen at once, whole life)',
          serviceMb: round(memory.serviceMb), postgresMb: round(memory.postgresMb ?? 0), postgresProcesses: memory.postgresProcesses,
          postgresRssSumMb: round(memory.postgresRssSumMb ?? 0),
        }
        : { during: 'payin-create (VmHWM of the service process, whole life)' },
    }),
  };
}
