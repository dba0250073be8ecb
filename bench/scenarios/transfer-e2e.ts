// transfer-e2e: transfers created at a steady rate with SANDBOX_SETTLE_MS=0 (real PostgreSQL and
// NATS); the latency from the start of POST /transfers to the arrival of its transfer.completed
// webhook at a local receiver: the whole pipeline (append, bus, provider gateway, saga, payout,
// webhook recorder and delivery). The quotes are made beforehand, outside the clock.
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { startService } from '../lib/service.ts';
import { startReceiver } from '../lib/receiver.ts';
import { asMerchant, newMerchant, TRANSFER_CORRIDORS, transferBody, transferQuoteBody } from '../lib/api.ts';
import { percentile, round } from '../lib/stats.ts';

export async function transferE2e(profile: Profile, opts: { nodeArgs?: string[] } = {}): Promise<Record<string, ScenarioResult>> {
  const db = await createDatabase();
  const rx = await startReceiver();
  const total = profile.transferRate * profile.transferSeconds;
  // Warm-up like the other scenarios: the profile's warm-up seconds at the same steady rate, untimed
  // (the first second after a start compiles the saga's, gateway's and webhooks' code paths, opens
  // the connections and learns the endpoint's pace; measured on its own it is a start-up figure).
  const warmup = profile.transferRate * profile.warmupSeconds;
  const started = new Map<string, number>();
  const latencies: number[] = [];
  let failedCreates = 0;
  let cpuMsPerTransfer = Number.NaN;
  let failedTransfers = 0;
  rx.onArrival = (a) => {
    const t0 = started.get(a.resourceId);
    if (t0 === undefined) return;
    if (a.event === 'transfer.completed') latencies.push(a.at - t0);
    if (a.event === 'transfer.failed') failedTransfers++;
  };
  try {
    const svc = await startService({ databaseUrl: db.url, label: 'transfer-e2e', env: { SANDBOX_SETTLE_MS: '0' }, ...(opts.nodeArgs ? { nodeArgs: opts.nodeArgs } : {}) });
    try {
      const m = await newMerchant(svc.url, 'Bench transfers', { corridors: TRANSFER_CORRIDORS, topUp: { XOF: '1000000' }, topUps: Math.ceil((total + 10) / 900), webhookUrl: rx.url });
      const quotes: string[] = [];
      let made = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (made++ < total + warmup) {
          const q = await asMerchant(svc.url, m, 'POST', '/quotes/transfer', transferQuoteBody);
          if (q.status !== 201) throw new Error(`transfer quote: HTTP ${q.status} ${JSON.stringify(q.body)}`);
          quotes.push(q.body.id);
        }
      }));
      await new Promise((r) => setTimeout(r, 2000)); // the quotes' own events are through the pipeline
      const create = async (quoteId: string, timed: boolean) => {
        const t0 = performance.now();
        const r = await asMerchant(svc.url, m, 'POST', '/transfers', transferBody(quoteId, m.customerId));
        if (r.status !== 201) { failedCreates++; return; }
        if (timed) started.set(r.body.id, t0);
      };
      const interval = 1000 / profile.transferRate;
      const steady = async (n: number, timed: boolean) => {
        const begin = performance.now();
        const inflight: Array<Promise<void>> = [];
        for (let i = 0; i < n; i++) {
          const due = begin + i * interval;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          inflight.push(create(quotes.pop()!, timed));
        }
        await Promise.all(inflight);
      };
      await steady(warmup, false);
      await new Promise((r) => setTimeout(r, 1000)); // the warm-up's transfers finish
      const cpu0 = svc.cpuMs();
      await steady(total, true);
      const deadline = Date.now() + 20_000;
      while (latencies.length + failedTransfers < started.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      // The service's CPU per transfer (its webhooks included): work, which a busy machine slows less than latency.
      cpuMsPerTransfer = started.size > 0 ? round((svc.cpuMs() - cpu0) / started.size) : Number.NaN;
    } finally {
      await svc.stop();
    }
  } finally {
    await rx.close();
    await db.drop();
  }
  const missing = started.size - latencies.length - failedTransfers;
  const p99 = round(percentile(latencies, 99) ?? Number.NaN);
  return {
    // Issue 44's targets (the earlier bound was 150 ms at the p99).
    'transfer-e2e p50': judge({ value: round(percentile(latencies, 50) ?? Number.NaN), unit: 'ms', target: { on: 'value', op: '<=', bound: 30 } }),
    'transfer-e2e p99': judge({
      value: p99, unit: 'ms', target: { on: 'value', op: '<=', bound: 75 },
      details: {
        p50Ms: round(percentile(latencies, 50) ?? Number.NaN), maxMs: round(Math.max(...latencies)), rate: profile.transferRate, transfers: started.size,
        serviceCpuMsPerTransfer: cpuMsPerTransfer, completedWebhooks: latencies.length, failedTransfers, failedCreates, missingAfter20s: missing,
      },
    }),
  };
}
