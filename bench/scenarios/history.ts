// history (issue 32): a merchant whose XAF wallet has 200,000 movements (1,000,000 with --full)
// against a new merchant in the same run. The history is top-ups, each decided by the wallet's own
// decider (domain/wallet.ts, as commands/wallets.ts decides them) and appended through the event
// store's append in batches of 1,000 (bench/lib/history.ts); then a service catches up with it (its
// projector and forwarder) and makes one more top-up through the operator API, the newest movement
// as a live service writes it. Measured:
// - the first payout after a restart (a payout quote + POST /payouts, which holds the funds on the
//   wallet: the wallet's first load in that process), the long history's against the new
//   merchant's, each in a service started for it, after an untimed payout of a third merchant has
//   warmed the service's code paths; the median of 3 restarts each (1 in smoke). Target ≤ 2×.
// - the service's RSS (VmRSS) a second after that payout, same pairs. Target ≤ 1.1×.
// - the money projection's rebuild (bench/rebuild-profile.ts, its own process) and the finance
//   audit (npm run audit's runAudit), in events/s, at the whole history against a tenth of it
//   (measured the same way in the same run, before the rest was appended). Target ≥ 0.8×.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { ADMIN_TOKEN, startService } from '../lib/service.ts';
import { rssKb } from '../lib/embedded.ts';
import { admin, call, newMerchant, type Merchant } from '../lib/api.ts';
import { percentile, round } from '../lib/stats.ts';
import { appendTopUps, rebuildInItsOwnProcess, timedAudit, timedPayout, topUpTemplate, waitForReaders, type TopUpTemplate } from '../lib/history.ts';
import { ourAppender } from '../ceilings/ours.ts';

const CURRENCY = 'XAF';
const MOVEMENT = 1000n;
/** One server key for every service of the run: each starts with a data directory of its own. */
const ENV = { SANDBOX_SETTLE_MS: '0', SECRET_HASH_KEY: randomBytes(32).toString('base64url') };
type Store = Awaited<ReturnType<typeof ourAppender>>;
interface Rates { rebuildEps: number; auditEps: number; events: number; auditOk: boolean; discrepancies: number; rebuildMs: number; auditMs: number }
interface FirstPayout { ms: number; payoutMs: number; rssMb: number; hwmMb: number }

interface Cast { long: Merchant; fresh: Merchant; warm: Merchant; template: TopUpTemplate }

/** The three merchants, funded for their payouts; the long one's first movement of the history as a template. */
async function setUp(url: string, ours: Store): Promise<Cast> {
  const svc = await startService({ databaseUrl: url, label: 'history', env: ENV });
  try {
    const funded = { topUp: { [CURRENCY]: '1000000' }, topUps: 2 };
    const long = await newMerchant(svc.url, 'Bench long history', funded);
    const fresh = await newMerchant(svc.url, 'Bench new merchant', funded);
    const warm = await newMerchant(svc.url, 'Bench warm-up', funded);
    const before = await ours.store.head();
    const r = await call(svc.url, 'POST', `/admin/merchants/${long.merchantId}/wallets/${CURRENCY}/top-ups`, { amount: String(MOVEMENT) },
      { authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': randomUUID() });
    if (r.status !== 201) throw new Error(`template top-up: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    return { long, fresh, warm, template: await topUpTemplate(ours.store, walletOf(long).streamId, before) };
  } finally {
    await svc.stop();
  }
}

const walletOf = (m: Merchant) => ({ streamId: `wallet-${m.merchantId}-${CURRENCY}`, merchantId: m.merchantId, currency: CURRENCY });

/** A service catches up with what was appended behind its back, and tops `m` up once itself. */
async function catchUp(url: string, ours: Store, m: Merchant, log: (s: string) => void): Promise<void> {
  const svc = await startService({ databaseUrl: url, label: 'history-catch-up', env: ENV });
  try {
    const r = await admin(svc.url, 'POST', `/admin/merchants/${m.merchantId}/wallets/${CURRENCY}/top-ups`, { amount: '1000000' });
    if (r.status !== 201) throw new Error(`top-up through the service: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    const w = await waitForReaders(ours.db.knex, ours.store, 600_000);
    log(`history: readers caught up in ${round(w.waitedMs / 1000)} s${w.lagging.length ? `; still behind: ${w.lagging.join(', ')}` : ''}`);
  } finally {
    await svc.stop();
  }
}

async function rates(url: string, ours: Store): Promise<Rates> {
  await ours.db.knex.raw('VACUUM (ANALYZE) events, streams');
  await ours.db.knex.raw('CHECKPOINT');
  const r = await rebuildInItsOwnProcess(url);
  const a = await timedAudit(ours.db.knex, ours.store);
  return {
    rebuildEps: round((r.events * 1000) / r.elapsedMs), auditEps: round((a.events * 1000) / a.elapsedMs), events: a.events,
    auditOk: a.ok, discrepancies: a.discrepancies, rebuildMs: round(r.elapsedMs), auditMs: round(a.elapsedMs),
  };
}

/** A service started afresh: a warm-up merchant's payout, then `m`'s first, timed; its RSS a second later. */
async function firstPayout(url: string, m: Merchant, warm: Merchant): Promise<FirstPayout> {
  const svc = await startService({ databaseUrl: url, label: 'history-restart', env: ENV });
  try {
    await timedPayout(svc.url, warm);
    await new Promise((r) => setTimeout(r, 300));
    const t = await timedPayout(svc.url, m);
    await new Promise((r) => setTimeout(r, 1000));
    return { ms: t.totalMs, payoutMs: t.payoutMs, rssMb: rssKb(svc.pid) / 1024, hwmMb: svc.memory().serviceMb };
  } finally {
    await svc.stop();
  }
}

const median = (xs: number[]) => round(percentile(xs, 50) ?? Number.NaN);

function results(n: number, runs: { fresh: FirstPayout[]; long: FirstPayout[] }, small: Rates, whole: Rates, appendMs: number): Record<string, ScenarioResult> {
  const pick = (k: keyof FirstPayout, xs: FirstPayout[]) => median(xs.map((x) => x[k]));
  const label = `${n.toLocaleString('en-US')} movements`;
  const ratesDetails = { events: whole.events, tenthEvents: small.events, auditOk: whole.auditOk && small.auditOk, discrepancies: whole.discrepancies + small.discrepancies };
  return {
    'history first payout': judge({
      value: pick('ms', runs.long), unit: 'ms', ceiling: pick('ms', runs.fresh), ceilingName: 'a new merchant\'s first payout after a restart (same run)',
      target: { on: 'ratio', op: '<=', bound: 2 },
      details: { movements: n, restarts: runs.long.length, payoutOnlyMs: pick('payoutMs', runs.long), freshPayoutOnlyMs: pick('payoutMs', runs.fresh),
        allMs: runs.long.map((x) => round(x.ms)), freshAllMs: runs.fresh.map((x) => round(x.ms)), historyAppendSeconds: round(appendMs / 1000) },
    }),
    'history RSS': judge({
      value: pick('rssMb', runs.long), unit: 'MB RSS', ceiling: pick('rssMb', runs.fresh), ceilingName: 'the service\'s RSS after a new merchant\'s first payout',
      target: { on: 'ratio', op: '<=', bound: 1.1 },
      details: { movements: n, peakMb: pick('hwmMb', runs.long), freshPeakMb: pick('hwmMb', runs.fresh) },
    }),
    'history rebuild': judge({
      value: whole.rebuildEps, unit: 'events/s', ceiling: small.rebuildEps, ceilingName: `the same at a tenth of the ${label}`,
      target: { on: 'ratio', op: '>=', bound: 0.8 }, details: { ...ratesDetails, elapsedMs: whole.rebuildMs, tenthElapsedMs: small.rebuildMs },
    }),
    'history audit': judge({
      value: whole.auditEps, unit: 'events/s', ceiling: small.auditEps, ceilingName: `the same at a tenth of the ${label}`,
      target: { on: 'ratio', op: '>=', bound: 0.8 }, details: { ...ratesDetails, elapsedMs: whole.auditMs, tenthElapsedMs: small.auditMs },
    }),
  };
}

export async function history(profile: Profile, log: (s: string) => void): Promise<Record<string, ScenarioResult>> {
  const db = await createDatabase();
  try {
    const ours = await ourAppender({ databaseUrl: db.url });
    try {
      const { long, fresh, warm, template } = await setUp(db.url, ours);
      const n = profile.historyMovements;
      const tenth = Math.round(n / 10);
      let appendMs = await appendTopUps(ours.store, walletOf(long), template, tenth - 1, MOVEMENT, log);
      await catchUp(db.url, ours, long, log);
      const small = await rates(db.url, ours);
      appendMs += await appendTopUps(ours.store, walletOf(long), template, n - tenth - 1, MOVEMENT, log);
      await catchUp(db.url, ours, long, log);
      const whole = await rates(db.url, ours);
      log(`history: ${n} movements written in ${round(appendMs / 1000)} s; rebuild ${small.rebuildEps} → ${whole.rebuildEps} events/s, audit ${small.auditEps} → ${whole.auditEps}`);
      const runs = { fresh: [] as FirstPayout[], long: [] as FirstPayout[] };
      for (let i = 0; i < (profile.name === 'smoke' ? 1 : 3); i++) {
        runs.fresh.push(await firstPayout(db.url, fresh, warm));
        runs.long.push(await firstPayout(db.url, long, warm));
      }
      return results(n, runs, small, whole, appendMs);
    } finally {
      await ours.close();
    }
  } finally {
    await db.drop();
  }
}
