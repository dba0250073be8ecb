// bulk-payouts (CONTRACT §10, issue 33): 100 payouts created by one POST /payouts/bulk against the
// same 100 as single POST /payouts, at the same concurrency, end to end (from the first request
// sent to the last answer received), in the same service one phase after the other. Both phases
// start from pre-created payout quotes and one funded wallet (the recipients' phone keeps every
// payout pending at the sandbox, so no settlement competes with the creates).
//
// Each of WORKERS clients creates its 100 payouts per round: with one batch request, or with 100
// single requests one after the other (a client's payouts in order, as a merchant paying a list
// would); the WORKERS clients run at once in both phases. The figure is payouts created per second;
// the target is the batch at least 3× the singles' rate. By design: a batch is one request, its
// items decided set-wise in one transaction and ONE atomic append (commands/payouts-bulk.ts), where
// 100 singles are 100 requests, each its own append taking its turn on the wallet.
import { randomUUID } from 'node:crypto';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { startService } from '../lib/service.ts';
import { call, merchantHeaders, newMerchant, type Merchant } from '../lib/api.ts';
import { percentile, round } from '../lib/stats.ts';

const ITEMS = 100;
const AMOUNT = '1000';

const recipient = { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000098', recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' };
const payoutBody = (m: Merchant, quoteId: string) => ({ quote_id: quoteId, customer_id: m.customerId, payment_reason_text: 'Supplier invoice', recipient });
const post = (url: string, m: Merchant, p: string, body: unknown) =>
  call(url, 'POST', p, body, { ...merchantHeaders(m), 'idempotency-key': randomUUID() });

/** `n` payout quotes, 16 requests at a time. */
async function quotes(url: string, m: Merchant, n: number): Promise<string[]> {
  const ids: string[] = [];
  const one = async () => {
    const r = await post(url, m, '/quotes/payout', {
      customer_id: m.customerId, country_code: 'SN', operator_code: 'SN_WAVE_MOMO', rail_type: 'mobile_money', send_amount: AMOUNT, send_currency: 'XOF',
    });
    if (r.status !== 201) throw new Error(`payout quote: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    ids.push(r.body.id);
  };
  for (let i = 0; i < n; i += 16) await Promise.all(Array.from({ length: Math.min(16, n - i) }, one));
  return ids;
}

/** One client's 100 payouts: one batch, or 100 singles in turn. Its duration in ms. */
async function client(url: string, m: Merchant, quoteIds: string[], mode: 'batch' | 'single'): Promise<number> {
  const t0 = performance.now();
  if (mode === 'batch') {
    const r = await post(url, m, '/payouts/bulk', { items: quoteIds.map((q, i) => ({ reference: `item-${i}`, ...payoutBody(m, q) })) });
    const refused = r.status === 201 ? r.body.items.filter((x: { status: number }) => x.status !== 201) : [];
    if (r.status !== 201 || refused.length > 0) throw new Error(`bulk: HTTP ${r.status} ${JSON.stringify(refused[0] ?? r.body)}`);
  } else {
    for (const q of quoteIds) {
      const r = await post(url, m, '/payouts', payoutBody(m, q));
      if (r.status !== 201) throw new Error(`payout: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    }
  }
  return performance.now() - t0;
}

interface Phase { payoutsPerSecond: number; wallMs: number; clientMedianMs: number; clientP99Ms: number; payouts: number }

/** `rounds` rounds of `workers` clients at once, each with its own 100 pre-created quotes. */
async function phase(url: string, m: Merchant, mode: 'batch' | 'single', workers: number, rounds: number): Promise<Phase> {
  const perRound = await Promise.all(Array.from({ length: rounds }, () => Promise.all(Array.from({ length: workers }, () => quotes(url, m, ITEMS)))));
  const durations: number[] = [];
  const t0 = performance.now();
  for (const clients of perRound) durations.push(...await Promise.all(clients.map((q) => client(url, m, q, mode))));
  const wallMs = performance.now() - t0;
  const payouts = workers * rounds * ITEMS;
  return {
    payoutsPerSecond: round(payouts / (wallMs / 1000)), wallMs: round(wallMs), payouts,
    clientMedianMs: round(percentile(durations, 50) ?? Number.NaN), clientP99Ms: round(percentile(durations, 99) ?? Number.NaN),
  };
}

export async function bulkPayouts(profile: Profile): Promise<Record<string, ScenarioResult>> {
  const workers = profile.name === 'smoke' ? 1 : 4;
  const rounds = profile.name === 'full' ? 5 : profile.name === 'quick' ? 2 : 1;
  const db = await createDatabase();
  let batch: Phase;
  let single: Phase;
  try {
    const svc = await startService({ databaseUrl: db.url, label: 'bulk-payouts', env: {} });
    try {
      // Funds for the warm-up and both phases (a top-up is at most 1,000,000).
      const needed = (2 * workers * rounds + 2) * ITEMS * Number(AMOUNT);
      const m = await newMerchant(svc.url, 'Bench bulk payouts', { topUp: { XOF: '1000000' }, topUps: Math.ceil(needed / 1_000_000) });
      // Warm-up: both routes, so neither phase pays for the first requests' caches.
      const warm = profile.name === 'smoke' ? 5 : ITEMS;
      await client(svc.url, m, await quotes(svc.url, m, warm), 'batch');
      await client(svc.url, m, await quotes(svc.url, m, warm), 'single');
      single = await phase(svc.url, m, 'single', workers, rounds);
      batch = await phase(svc.url, m, 'batch', workers, rounds);
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
  return {
    'bulk-payouts': judge({
      value: batch.payoutsPerSecond, unit: 'payouts created/s (batches of 100)',
      ceiling: single.payoutsPerSecond, ceilingName: `the same payouts as single POST /payouts, ${workers} clients at once`,
      target: { on: 'ratio', op: '>=', bound: 3 },
      details: {
        workers, rounds, itemsPerBatch: ITEMS, batch, single,
        oneBatchOf100Ms: batch.clientMedianMs, hundredSinglesMs: single.clientMedianMs,
        design: 'one request, items decided set-wise in one transaction, one atomic append (commands/payouts-bulk.ts)',
      },
    }),
  };
}
