// payin-create-mtn (issue 41): payins through the MTN MoMo adapter against a simulator of MTN's API
// that answers at once (test/simulators/mtn-momo.ts, in a process of its own so that its work is not
// in the load generator's response times: bench/lib/mtn-simulator-child.ts; it answers the
// request-to-pay 202 and settles the leg SUCCESSFUL when its status is asked), side by side with the sandbox path
// in the same run. The load is payin-create's (quote + payin pairs at 64 connections, real
// PostgreSQL and NATS) against two services, each on a fresh database, started with the same
// environment (MTN configured in both; a leg's status asked FIRST_CHECK_MS after its start, the
// sandbox's too: SANDBOX_SETTLE_MS):
//   - sandbox: CM_MTN_MOMO on its default routing, the sandbox operator (payin-create's path);
//   - mtn_momo: CM_MTN_MOMO routed to `mtn_momo` (PUT /admin/operators/CM_MTN_MOMO/routing).
// The measured load runs in rounds that alternate between the two (sandbox, MTN, MTN, sandbox, …),
// each round followed by a wait until its payins are settled, so that a machine whose speed drifts
// (other work on it) weighs on both alike and each round holds its own payins' settlements; the
// figures are over all the rounds of a side (creates/s over its load time, percentiles over every
// response). Targets: the MTN side's creates/s at least 0.8 of the sandbox side's, its p99 at most
// 100 ms. At the end, from the database and the simulator's requests: every payin of the MTN side
// reached MTN once (one request-to-pay under its id as X-Reference-Id, none under an id that is not a
// payin's) and completed, else the scenario fails.
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase, type BenchDatabase } from '../lib/database.ts';
import { startService, type Service } from '../lib/service.ts';
import { load } from '../lib/load.ts';
import { admin, createPayin, newMerchant, type Merchant } from '../lib/api.ts';
import { percentile, round } from '../lib/stats.ts';
import { openDatabase, type Database } from '../../infra/db.ts';
import { startHttpChild } from '../lib/child.ts';
import type { MtnSimulatorOptions } from '../../test/simulators/mtn-momo.ts';
import type { MtnSimulatorReport } from '../lib/mtn-simulator-child.ts';
import { CONNECTIONS, payinRequests } from './payin-create.ts';

const COLLECTION = { subscriptionKey: 'bench-col-sub-key', apiUser: 'b0b0c0d0-0000-4000-8000-000000000001', apiKey: 'bench-col-api-key' };
const DISBURSEMENT = { subscriptionKey: 'bench-dis-sub-key', apiUser: 'b0b0c0d0-0000-4000-8000-000000000002', apiKey: 'bench-dis-api-key' };
/** A leg's first status check after its start, on both sides. */
const FIRST_CHECK_MS = 100;
/** Measured rounds per side (fewer when a round would be under 2 s: the smoke profile's one). */
const ROUNDS = 4;
type Provider = 'sandbox' | 'mtn_momo';

/** The simulator's process: its address, what it saw, and its stop. */
interface Simulator { url: string; report(): Promise<MtnSimulatorReport>; stop(): Promise<void> }

async function startSimulator(options: MtnSimulatorOptions): Promise<Simulator> {
  const child = await startHttpChild('bench/lib/mtn-simulator-child.ts', { MTN_SIMULATOR_OPTIONS: JSON.stringify(options) }, 'mtn-simulator');
  try {
    const { url } = await (await fetch(`${child.url}/healthz`)).json() as { url: string };
    return { url, report: async () => await (await fetch(`${child.url}/report`)).json() as MtnSimulatorReport, stop: () => child.stop() };
  } catch (err) {
    await child.stop();
    throw err;
  }
}

/** The service's settings: MTN pointing at the simulator (the sandbox's own currency, EUR). */
function serviceEnv(sim: Simulator): Record<string, string> {
  return {
    MTN_MOMO_BASE_URL: sim.url, MTN_MOMO_TARGET_ENVIRONMENT: 'sandbox', MTN_MOMO_CURRENCY: 'EUR',
    MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: COLLECTION.subscriptionKey, MTN_MOMO_COLLECTION_API_USER: COLLECTION.apiUser,
    MTN_MOMO_COLLECTION_API_KEY: COLLECTION.apiKey, MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY: DISBURSEMENT.subscriptionKey,
    MTN_MOMO_DISBURSEMENT_API_USER: DISBURSEMENT.apiUser, MTN_MOMO_DISBURSEMENT_API_KEY: DISBURSEMENT.apiKey,
    PROVIDER_FIRST_CHECK_MS: String(FIRST_CHECK_MS), SANDBOX_SETTLE_MS: String(FIRST_CHECK_MS),
  };
}

/** One side of the comparison: its service, database, merchant, and what its rounds measured. */
interface Side {
  provider: Provider;
  db: BenchDatabase;
  reader: Database;
  svc?: Service;
  m?: Merchant;
  latencies: number[];
  ok: number; non2xx: number; errors: number; timeouts: number; loadMs: number; cpuMs: number; settleWaitMs: number; benchBusyMs: number;
}

interface Settlement { created: number; completed: number; failed: number; pending: number }

async function settlement(knex: Knex, m: Merchant): Promise<Settlement> {
  return (await knex.raw(`SELECT count(*)::int AS created, count(*) FILTER (WHERE status = 'completed')::int AS completed,
      count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*) FILTER (WHERE status NOT IN ('completed', 'failed'))::int AS pending
    FROM payins WHERE merchant_id = ?`, [m.merchantId])).rows[0] as Settlement;
}

/** Until every payin of the side is settled (or `limitMs`). */
async function settled(side: Side, limitMs: number): Promise<Settlement> {
  const t0 = Date.now();
  let row = await settlement(side.reader.knex, side.m!);
  while (row.pending > 0 && Date.now() - t0 < limitMs) {
    await new Promise((r) => setTimeout(r, 100));
    row = await settlement(side.reader.knex, side.m!);
  }
  return row;
}

async function newSide(provider: Provider): Promise<Side> {
  const db = await createDatabase();
  try {
    return {
      provider, db, reader: await openDatabase({ databaseUrl: db.url }), latencies: [],
      ok: 0, non2xx: 0, errors: 0, timeouts: 0, loadMs: 0, cpuMs: 0, settleWaitMs: 0, benchBusyMs: 0,
    };
  } catch (err) {
    await db.drop();
    throw err;
  }
}

/** The side's service started, routed, with its merchant, warmed up. */
async function prepare(side: Side, sim: Simulator, profile: Profile): Promise<void> {
  const { provider, db } = side;
  side.svc = await startService({ databaseUrl: db.url, label: `payin-create-${provider}`, env: serviceEnv(sim) });
  if (provider === 'mtn_momo') {
    const r = await admin(side.svc.url, 'PUT', '/admin/operators/CM_MTN_MOMO/routing', { providers: ['mtn_momo'] });
    if (r.status !== 200) throw new Error(`routing: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  }
  side.m = await newMerchant(side.svc.url, `Bench payins (${provider})`);
  await createPayin(side.svc.url, side.m); // the first request warms the routes' caches (and MTN's token)
  await load({ url: side.svc.url, connections: CONNECTIONS, seconds: profile.warmupSeconds, requests: payinRequests(side.m) as any });
}

async function close(side: Side): Promise<void> {
  try {
    await side.svc?.stop();
  } finally {
    await side.reader.close();
    await side.db.drop();
  }
}

/** One measured round on a side, then the wait until its payins are settled (their CPU counted). */
async function measureRound(side: Side, seconds: number): Promise<void> {
  const svc = side.svc!;
  const cpu0 = svc.cpuMs();
  const elu0 = performance.eventLoopUtilization();
  const r = await load({
    url: svc.url, connections: CONNECTIONS, seconds, requests: payinRequests(side.m!) as any,
    onResponse: (_status, ms) => { side.latencies.push(ms); },
  });
  // How busy this process (the load generator) was during the load.
  side.benchBusyMs += performance.eventLoopUtilization(elu0).active;
  const t0 = Date.now();
  await settled(side, 30_000);
  side.settleWaitMs += Date.now() - t0;
  side.cpuMs += svc.cpuMs() - cpu0;
  side.ok += r.ok;
  side.non2xx += r.non2xx;
  side.errors += r.errors;
  side.timeouts += r.timeouts;
  side.loadMs += r.durationMs;
}

/** What MTN saw of the side's payins: request-to-pays per X-Reference-Id against the payins in its database. */
async function reachedMtn(side: Side, sim: Simulator) {
  const rows = (await side.reader.knex('payins').where({ merchant_id: side.m!.merchantId }).select('id')) as Array<{ id: string }>;
  const ids = new Set(rows.map((r) => r.id));
  const seen = await sim.report();
  const sent = new Map<string, number>();
  for (const ref of seen.requestToPayReferences) sent.set(ref, (sent.get(ref) ?? 0) + 1);
  const never = [...ids].filter((id) => !sent.has(id));
  const twice = [...sent].filter(([, n]) => n > 1).map(([id]) => id);
  const unknown = [...sent.keys()].filter((id) => !ids.has(id));
  return {
    payins: ids.size, requestToPays: seen.requestToPayReferences.length, statusQueries: seen.statusQueries,
    tokenCalls: seen.tokenCalls, legsSuccessful: seen.legsSuccessful,
    neverSent: never.length, sentTwice: twice.length, unknownReferences: unknown.length,
    problems: [...never.slice(0, 3).map((id) => `${id} never reached MTN`), ...twice.slice(0, 3).map((id) => `${id} sent more than once`),
      ...unknown.slice(0, 3).map((id) => `${id} sent to MTN but is no payin of the run`)],
  };
}

const perSecond = (s: Side) => (s.loadMs > 0 ? (s.ok * 1000) / s.loadMs : 0);
const p = (s: Side, q: number) => round(percentile(s.latencies, q) ?? Number.NaN);

function summary(s: Side, end: Settlement) {
  return {
    okPerSecond: round(perSecond(s)), payinsPerSecond: round(perSecond(s) / 2), p50Ms: p(s, 50), p99Ms: p(s, 99), responses: s.latencies.length,
    non2xx: s.non2xx, errors: s.errors, timeouts: s.timeouts, loadSeconds: round(s.loadMs / 1000),
    serviceCpuMsPerPair: s.ok > 0 ? round(s.cpuMs / (s.ok / 2)) : Number.NaN, benchLoopUtilization: s.loadMs > 0 ? round(s.benchBusyMs / s.loadMs, 3) : Number.NaN,
    settleWaitMsAfterRounds: s.settleWaitMs, payins: end.created, completed: end.completed, failed: end.failed, pending: end.pending,
  };
}

/** The measured rounds, alternating (ABBA) so that neither side always runs first. */
async function measure(sandbox: Side, mtn: Side, profile: Profile): Promise<number> {
  const rounds = Math.max(1, Math.min(ROUNDS, Math.floor(profile.seconds / 2)));
  const seconds = profile.seconds / rounds;
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 === 0 ? [sandbox, mtn] : [mtn, sandbox]) await measureRound(side, seconds);
  }
  return rounds;
}

export async function payinCreateMtn(profile: Profile): Promise<Record<string, ScenarioResult>> {
  const sim = await startSimulator({ collection: COLLECTION, disbursement: DISBURSEMENT, targetEnvironment: 'sandbox', currency: 'EUR', keepAlive: true });
  const sides: Side[] = [];
  let details: Record<string, unknown>;
  let sandbox: Side;
  let mtn: Side;
  try {
    sandbox = await newSide('sandbox');
    sides.push(sandbox);
    mtn = await newSide('mtn_momo');
    sides.push(mtn);
    await prepare(sandbox, sim, profile);
    await prepare(mtn, sim, profile);
    // The warm-ups' settlements done before the first round, on both sides.
    await settled(sandbox, 30_000);
    await settled(mtn, 30_000);
    const rounds = await measure(sandbox, mtn, profile);
    const [sandboxEnd, mtnEnd] = [await settled(sandbox, 60_000), await settled(mtn, 60_000)];
    const reached = await reachedMtn(mtn, sim);
    if (reached.problems.length > 0 || mtnEnd.completed !== mtnEnd.created) {
      throw new Error(`payin-create-mtn: not every payin reached MTN once and completed (${mtnEnd.completed} of ${mtnEnd.created} completed): ${reached.problems.join('; ')}`);
    }
    details = {
      connections: CONNECTIONS, firstCheckMs: FIRST_CHECK_MS, rounds, roundSeconds: profile.seconds / rounds,
      mtn: summary(mtn, mtnEnd), sandbox: summary(sandbox, sandboxEnd), reachedMtn: reached,
    };
  } finally {
    try {
      for (const side of sides) await close(side);
    } finally {
      await sim.stop(); // a process of its own: it would outlive the bench
    }
  }
  const ceilingName = 'the sandbox path, same run';
  return {
    'payin-create-mtn': judge({
      value: round(perSecond(mtn)), unit: 'creates/s', ceiling: round(perSecond(sandbox)), ceilingName,
      target: { on: 'ratio', op: '>=', bound: 0.8 }, details,
    }),
    'payin-create-mtn p99': judge({
      value: p(mtn, 99), unit: 'ms', ceiling: p(sandbox, 99), ceilingName: `${ceilingName} (p99)`,
      target: { on: 'value', op: '<=', bound: 100 }, details: { p50Ms: p(mtn, 50), sandboxP50Ms: p(sandbox, 50) },
    }),
  };
}
