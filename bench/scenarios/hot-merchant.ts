// hot-merchant (issue 32): payins (quote + payin at 64 connections, the most the service takes,
// SANDBOX_SETTLE_MS=0 so each settles as soon as its provider leg starts) all for one merchant,
// against the same load spread round-robin over 50 merchants, in the same service one after the
// other. The figure is the settlement rate: payins completed per second, from the payins read
// model (the first payin's creation to the last completion, status completed, of the phase's
// payins); the target is the hot merchant's within 2× of the spread one's (ratio ≥ 0.5).
// A merchant's wallet stream is the serialization point of its settlements (each credit is
// decided on the wallet as the previous one left it): the design batches, it does not split the
// account. The outcomes waiting for one wallet are decided in order and appended together, each
// payment's events and the wallet's in one atomic append (commands/wallet-settlements.ts over
// commands/per-key-batcher.ts), so a hot wallet takes one append round trip per batch, not per payin.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { startService } from '../lib/service.ts';
import { load, type LoadResult } from '../lib/load.ts';
import { createPayin, merchantHeaders, newMerchant, payinBody, payinQuoteBody, type Merchant } from '../lib/api.ts';
import { round } from '../lib/stats.ts';
import { openDatabase } from '../../infra/db.ts';
import { CONNECTIONS } from './payin-create.ts';

const SPREAD = 50;

type Ctx = { quoteId?: string; m?: Merchant };

/** Quote + payin pairs, each pair for the next merchant of `ms` in turn. */
function spreadRequests(ms: Merchant[]) {
  let next = 0;
  const headers = (m: Merchant) => ({ ...merchantHeaders(m), 'content-type': 'application/json', 'idempotency-key': randomUUID() });
  return [
    {
      method: 'POST' as const, path: '/quotes/payin',
      setupRequest: (req: any, ctx: Ctx) => {
        const m = ms[next++ % ms.length]!;
        ctx.m = m;
        return { ...req, headers: headers(m), body: JSON.stringify({ customer_id: m.customerId, ...payinQuoteBody }) };
      },
      onResponse: (status: number, body: string, ctx: Ctx) => { ctx.quoteId = status === 201 ? JSON.parse(body).id : undefined; },
    },
    {
      method: 'POST' as const, path: '/payins',
      setupRequest: (req: any, ctx: Ctx) => (ctx.quoteId && ctx.m
        ? { ...req, headers: headers(ctx.m), body: JSON.stringify(payinBody(ctx.quoteId, ctx.m.customerId)) }
        : undefined),
    },
  ];
}

interface Phase { eventsPerPayin: number; created: number; completed: number; pending: number; settledPerSecond: number; createdPerSecond: number; meanLagMs: number; load: LoadResult }

/** Until the phase's payins are all settled (or 60 s), then its figures from the payins read model. */
async function settled(knex: Knex, ms: Merchant[], since: Date, r: LoadResult): Promise<Phase> {
  const ids = ms.map((m) => m.merchantId);
  const query = () => knex.raw(`SELECT count(*)::int AS created, count(*) FILTER (WHERE status = 'completed')::int AS completed,
      count(*) FILTER (WHERE status NOT IN ('completed', 'failed'))::int AS pending,
      extract(epoch FROM max(updated_at) FILTER (WHERE status = 'completed') - min(created_at)) AS span,
      extract(epoch FROM avg(updated_at - created_at) FILTER (WHERE status = 'completed')) AS lag
    FROM payins WHERE merchant_id = ANY(?::uuid[]) AND created_at >= ?`, [ids, since]);
  const end = Date.now() + 60_000;
  let row = (await query()).rows[0];
  while (row.pending > 0 && Date.now() < end) {
    await new Promise((res) => setTimeout(res, 250));
    row = (await query()).rows[0];
  }
  const span = Number(row.span);
  return {
    eventsPerPayin: Number.NaN, created: row.created, completed: row.completed, pending: row.pending, settledPerSecond: span > 0 ? round(row.completed / span) : 0,
    createdPerSecond: round(r.okPerSecond / 2), meanLagMs: round(Number(row.lag) * 1000), load: r,
  };
}

const head = async (knex: Knex) => Number((await knex.raw('SELECT coalesce(max(global_position), 0) AS p FROM events')).rows[0].p);

async function phase(url: string, knex: Knex, ms: Merchant[], seconds: number): Promise<Phase> {
  const since = new Date();
  const before = await head(knex);
  const r = await load({ url, connections: CONNECTIONS, seconds, requests: spreadRequests(ms) as any });
  const p = await settled(knex, ms, since, r);
  // Every event the phase wrote (quotes, payins, wallets, webhooks' records…) per payin settled.
  return { ...p, eventsPerPayin: p.completed > 0 ? round(((await head(knex)) - before) / p.completed) : Number.NaN };
}

const summary = (p: Phase) => ({
  settledPerSecond: p.settledPerSecond, eventsPerPayin: p.eventsPerPayin, createdPerSecond: p.createdPerSecond, created: p.created, completed: p.completed,
  stillPendingAfter60s: p.pending, meanCreateToCompletedMs: p.meanLagMs, p99Ms: p.load.p99, non2xx: p.load.non2xx,
});

export async function hotMerchant(profile: Profile): Promise<Record<string, ScenarioResult>> {
  const db = await createDatabase();
  const reader = await openDatabase({ databaseUrl: db.url });
  let hot: Phase;
  let spread: Phase;
  try {
    const svc = await startService({ databaseUrl: db.url, label: 'hot-merchant', env: { SANDBOX_SETTLE_MS: '0' } });
    try {
      const one = [await newMerchant(svc.url, 'Bench hot merchant')];
      const many: Merchant[] = [];
      for (let i = 0; i < SPREAD; i++) many.push(await newMerchant(svc.url, `Bench merchant ${i}`));
      await createPayin(svc.url, one[0]!); // the first request warms the routes' caches
      await load({ url: svc.url, connections: CONNECTIONS, seconds: profile.warmupSeconds, requests: spreadRequests(many) as any });
      await new Promise((r) => setTimeout(r, 2000)); // the warm-up's payins settle
      hot = await phase(svc.url, reader.knex, one, profile.seconds);
      spread = await phase(svc.url, reader.knex, many, profile.seconds);
    } finally {
      await svc.stop();
    }
  } finally {
    await reader.close();
    await db.drop();
  }
  return {
    'hot-merchant': judge({
      value: hot.settledPerSecond, unit: 'payins settled/s', ceiling: spread.settledPerSecond, ceilingName: `the same load over ${SPREAD} merchants`,
      target: { on: 'ratio', op: '>=', bound: 0.5 },
      details: { connections: CONNECTIONS, design: 'a wallet\'s settlements batched (commands/wallet-settlements.ts), the account not split', hot: summary(hot), spread: summary(spread) },
    }),
  };
}
