// webhooks: payins of several healthy merchants completed (SANDBOX_SETTLE_MS=0) while one other
// merchant's endpoint hangs (never answers, so each of its attempts holds a slot until the
// time-out); deliveries/s at the healthy receiver, against the rate the payins were created at in
// the same run (the pipeline cannot deliver faster than events arise: ratio 1 = it keeps up).
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { startService } from '../lib/service.ts';
import { startReceiver } from '../lib/receiver.ts';
import { createPayin, newMerchant, type Merchant } from '../lib/api.ts';
import { percentile, round } from '../lib/stats.ts';

const HEALTHY_MERCHANTS = 4;
const CREATORS = 16;
const HUNG_PAYINS = 40;

export async function webhooks(profile: Profile): Promise<Record<string, ScenarioResult>> {
  const db = await createDatabase();
  const alive = await startReceiver();
  const dead = await startReceiver({ hang: true });
  const createdAt = new Map<string, number>();
  const lags: number[] = [];
  alive.onArrival = (a) => {
    const t = createdAt.get(a.resourceId);
    if (t !== undefined && a.event === 'payin.completed') lags.push(a.at - t);
  };
  let createMs = 0;
  let firstCreate = 0;
  let lastDelivery = 0;
  try {
    const svc = await startService({ databaseUrl: db.url, label: 'webhooks', env: { SANDBOX_SETTLE_MS: '0', WEBHOOK_TIMEOUT_MS: '10000' } });
    try {
      const hung = await newMerchant(svc.url, 'Hangs', { webhookUrl: dead.url });
      const healthy: Merchant[] = [];
      for (let i = 0; i < HEALTHY_MERCHANTS; i++) healthy.push(await newMerchant(svc.url, `Answers ${i}`, { webhookUrl: alive.url }));
      // The hanging endpoint first: its attempts are in flight before the measured load starts.
      await Promise.all(Array.from({ length: HUNG_PAYINS }, () => createPayin(svc.url, hung)));
      const deadline = Date.now() + 15_000;
      while (dead.arrivals.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

      let next = 0;
      firstCreate = performance.now();
      await Promise.all(Array.from({ length: CREATORS }, async (_, c) => {
        while (next < profile.webhookEvents) {
          const i = next++;
          const id = await createPayin(svc.url, healthy[(c + i) % HEALTHY_MERCHANTS]!);
          createdAt.set(id, performance.now());
        }
      }));
      createMs = performance.now() - firstCreate;
      const end = Date.now() + 60_000;
      while (lags.length < profile.webhookEvents && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      lastDelivery = Math.max(...alive.arrivals.map((a) => a.at));
    } finally {
      await svc.stop();
    }
  } finally {
    await alive.close();
    await dead.close();
    await db.drop();
  }
  const created = createdAt.size;
  const deliveriesPerSecond = round((lags.length * 1000) / (lastDelivery - firstCreate));
  const createdPerSecond = round((created * 1000) / createMs);
  return {
    webhooks: judge({
      value: deliveriesPerSecond, unit: 'deliveries/s', ceiling: createdPerSecond, ceilingName: 'payins completed/s fed in (same run)',
      details: {
        delivered: lags.length, created, hungEndpointAttempts: dead.arrivals.length, healthyMerchants: HEALTHY_MERCHANTS,
        lagP50Ms: round(percentile(lags, 50) ?? Number.NaN), lagP99Ms: round(percentile(lags, 99) ?? Number.NaN),
      },
    }),
  };
}
