// as-of (issue 35): a merchant whose XOF wallet has 1,000,000 movements (2,000 in smoke) answers
// GET /wallets?as_of= in under 50 ms. The history is top-ups, each decided by the wallet's own decider
// and appended through the event store's append 1,000 at a time, as the history scenario writes its
// own (bench/lib/history.ts); a service then catches up with it (the wallet movements read model
// included, migration 025) and is asked the balances as of instants drawn uniformly over the
// history, one request at a time after a warm-up. Reported: p50 and p99 of those answers against
// the 50 ms target, beside a merchant with a handful of movements asked the same way; each answer
// sampled is checked against the sum of the movements before its instant.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { ADMIN_TOKEN, startService } from '../lib/service.ts';
import { asMerchant, call, newMerchant, type Merchant } from '../lib/api.ts';
import { percentile, round } from '../lib/stats.ts';
import { appendTopUps, topUpTemplate, waitForReaders, type TopUpTemplate } from '../lib/history.ts';
import { ourAppender } from '../ceilings/ours.ts';

const CURRENCY = 'XOF';
const MOVEMENT = 1000n;
const TARGET_MS = 50;
const ENV = { SANDBOX_SETTLE_MS: '0', SECRET_HASH_KEY: randomBytes(32).toString('base64url') };
type Store = Awaited<ReturnType<typeof ourAppender>>;
const walletOf = (m: Merchant) => ({ streamId: `wallet-${m.merchantId}-${CURRENCY}`, merchantId: m.merchantId, currency: CURRENCY });

/** The long-history merchant and a short one, each topped up; the long one's first top-up as the template. */
async function setUp(url: string, ours: Store): Promise<{ long: Merchant; short: Merchant; template: TopUpTemplate }> {
  const svc = await startService({ databaseUrl: url, label: 'as-of', env: ENV });
  try {
    const long = await newMerchant(svc.url, 'Bench as-of long history');
    const short = await newMerchant(svc.url, 'Bench as-of short history', { topUp: { [CURRENCY]: '100000' }, topUps: 5 });
    const before = await ours.store.head();
    const r = await call(svc.url, 'POST', `/admin/merchants/${long.merchantId}/wallets/${CURRENCY}/top-ups`, { amount: String(MOVEMENT) },
      { authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': randomUUID() });
    if (r.status !== 201) throw new Error(`template top-up: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    return { long, short, template: await topUpTemplate(ours.store, walletOf(long).streamId, before) };
  } finally {
    await svc.stop();
  }
}

/** The wallet's first and last movement times (ms). */
async function span(ours: Store, m: Merchant): Promise<[number, number]> {
  const r = (await ours.db.knex.raw('SELECT min(at) AS a, max(at) AS b FROM wallet_movements WHERE merchant_id = ? AND currency = ?', [m.merchantId, CURRENCY])).rows[0];
  return [new Date(r.a).getTime(), new Date(r.b).getTime() + 1];
}

/** `n` answers of GET /wallets?as_of= at instants drawn over the wallet's history, one at a time: their times (ms). */
async function timedAsOf(base: string, m: Merchant, [from, to]: [number, number], n: number): Promise<{ ms: number[]; asked: Array<[string, string]> }> {
  const ms: number[] = [];
  const asked: Array<[string, string]> = [];
  for (let i = 0; i < n; i++) {
    const at = new Date(from + Math.random() * (to - from)).toISOString();
    const t0 = performance.now();
    const r = await asMerchant(base, m, 'GET', `/wallets?as_of=${encodeURIComponent(at)}`);
    ms.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`as_of: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    asked.push([at, r.body.data.find((w: { currency: string }) => w.currency === CURRENCY).available]);
  }
  return { ms, asked };
}

/** Each sampled answer against the sum of the wallet's movements before its instant (the read model's own rows). */
async function checked(ours: Store, m: Merchant, asked: Array<[string, string]>): Promise<boolean> {
  for (const [at, available] of asked.slice(0, 3)) {
    const r = (await ours.db.knex.raw('SELECT coalesce(sum(available_delta), 0)::text AS s FROM wallet_movements WHERE merchant_id = ? AND currency = ? AND at < ?',
      [m.merchantId, CURRENCY, at])).rows[0];
    if (r.s !== available) return false;
  }
  return true;
}

export async function asOf(profile: Profile, log: (s: string) => void): Promise<Record<string, ScenarioResult>> {
  const db = await createDatabase();
  try {
    const ours = await ourAppender({ databaseUrl: db.url });
    try {
      const { long, short, template } = await setUp(db.url, ours);
      const n = profile.asOfMovements;
      const appendMs = await appendTopUps(ours.store, walletOf(long), template, n - 1, MOVEMENT, log);
      const svc = await startService({ databaseUrl: db.url, label: 'as-of-measure', env: ENV });
      try {
        const w = await waitForReaders(ours.db.knex, ours.store, 900_000);
        log(`as-of: ${n} movements written in ${round(appendMs / 1000)} s; readers caught up in ${round(w.waitedMs / 1000)} s`);
        await ours.db.knex.raw('VACUUM (ANALYZE) wallet_movements');
        const samples = profile.name === 'smoke' ? 20 : 300;
        await timedAsOf(svc.url, long, await span(ours, long), 20); // warm-up
        const longRun = await timedAsOf(svc.url, long, await span(ours, long), samples);
        const shortRun = await timedAsOf(svc.url, short, await span(ours, short), samples);
        const ok = await checked(ours, long, longRun.asked) && await checked(ours, short, shortRun.asked);
        if (!ok) throw new Error('as-of: an answer is not the sum of the movements before its instant');
        const p = (xs: number[], q: number) => round(percentile(xs, q) ?? Number.NaN);
        const details = {
          movements: n, samples, shortHistoryP50Ms: p(shortRun.ms, 50), shortHistoryP99Ms: p(shortRun.ms, 99),
          answersChecked: ok, historyAppendSeconds: round(appendMs / 1000), catchUpSeconds: round(w.waitedMs / 1000),
        };
        const figure = (q: number) => judge({
          value: p(longRun.ms, q), unit: 'ms', ceiling: TARGET_MS, ceilingName: `the ${TARGET_MS} ms target (issue 35)`,
          target: { on: 'value', op: '<=', bound: TARGET_MS }, details,
        });
        return { 'as-of p50': figure(50), 'as-of p99': figure(99) };
      } finally {
        await svc.stop();
      }
    } finally {
      await ours.close();
    }
  } finally {
    await db.drop();
  }
}
