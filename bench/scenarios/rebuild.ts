// rebuild: the money projection (quotes, payins, payouts, wallets, ledger) rebuilt online from
// 200,000 events (1,000,000 with --full), in events/s. The events are realistic: a few payins are
// made and completed through the real service first, then their streams (quote, payin, and the
// wallet credit) are cloned with fresh ids straight through the event store in big batches.
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { startService } from '../lib/service.ts';
import { createPayin, newMerchant } from '../lib/api.ts';
import { round } from '../lib/stats.ts';
import { ourAppender } from '../ceilings/ours.ts';
import { ROOT } from '../lib/service.ts';
import type { RebuildMeasure } from '../lib/rebuild-measure.ts';
import type { RecordedEvent, StreamAppend } from '../../infra/eventstore/types.ts';

const run = promisify(execFile);
const TEMPLATE_PAYINS = 5;
/** Payins per merchant among the clones (each merchant's wallet stream grows with its credits). */
const PAYINS_PER_MERCHANT = 200;

/** bench/rebuild-profile.ts in a child process: the rebuild as an operator's CLI would run it. */
async function rebuildInItsOwnProcess(databaseUrl: string): Promise<RebuildMeasure> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/rebuild-profile.ts'), databaseUrl, '--json'],
    { cwd: ROOT, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as RebuildMeasure;
}

/** Vacuums and analyses the event store's tables, then flushes their pages (a checkpoint). */
async function settle(knex: Knex): Promise<void> {
  await knex.raw('VACUUM (ANALYZE) events, streams');
  await knex.raw('CHECKPOINT');
}

export async function rebuild(profile: Profile, log: (s: string) => void): Promise<Record<string, ScenarioResult>> {
  const db = await createDatabase();
  try {
    let merchantId = '';
    const payinIds: string[] = [];
    const svc = await startService({ databaseUrl: db.url, label: 'rebuild', env: { SANDBOX_SETTLE_MS: '0' } });
    try {
      const m = await newMerchant(svc.url, 'Bench rebuild');
      merchantId = m.merchantId;
      for (let i = 0; i < TEMPLATE_PAYINS; i++) payinIds.push(await createPayin(svc.url, m));
      const end = Date.now() + 30_000;
      for (;;) {
        const r = await fetch(`${svc.url}/payins?limit=100`, { headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret } });
        const body = (await r.json()) as { data: Array<{ status: string }> };
        if (body.data.filter((p) => p.status === 'completed').length >= TEMPLATE_PAYINS) break;
        if (Date.now() > end) throw new Error('the template payins did not complete');
        await new Promise((res) => setTimeout(res, 100));
      }
    } finally {
      await svc.stop();
    }

    const ours = await ourAppender({ databaseUrl: db.url });
    try {
      // One template: a payin's quote and payin streams, and the wallet credit that completed it.
      const pid = payinIds[0]!;
      const payin = await ours.store.readStream(`payin-${pid}`);
      const quoteId = String(payin[0]!.data.quote_id);
      const quote = await ours.store.readStream(`quote-${quoteId}`);
      const wallet = (await ours.store.readStream(`wallet-${merchantId}-XAF`)).find((e) => JSON.stringify(e.data).includes(pid));
      if (!wallet) throw new Error(`no wallet credit found for payin ${pid} (streams: wallet-${merchantId}-XAF)`);
      const perPayin = payin.length + quote.length + 1;
      const clones = Math.ceil(profile.rebuildEvents / perPayin);
      const clone = (e: RecordedEvent, map: Record<string, string>) => {
        let text = JSON.stringify(e.data);
        for (const [from, to] of Object.entries(map)) text = text.split(from).join(to);
        return { type: e.type, data: JSON.parse(text) as Record<string, unknown>, metadata: e.metadata };
      };
      const started = performance.now();
      let written = 0;
      const inflight = new Set<Promise<unknown>>();
      for (let merchant = 0; merchant * PAYINS_PER_MERCHANT < clones; merchant++) {
        const mid = randomUUID();
        const walletAppend: StreamAppend = { streamId: `wallet-${mid}-XAF`, expectedVersion: 0, events: [] };
        const appends: StreamAppend[] = [];
        for (let k = 0; k < PAYINS_PER_MERCHANT && merchant * PAYINS_PER_MERCHANT + k < clones; k++) {
          const map = { [pid]: randomUUID(), [quoteId]: randomUUID(), [merchantId]: mid, [wallet.data.credit_id as string]: randomUUID() };
          appends.push({ streamId: `quote-${map[quoteId]}`, expectedVersion: 0, events: quote.map((e) => clone(e, map)) });
          appends.push({ streamId: `payin-${map[pid]}`, expectedVersion: 0, events: payin.map((e) => clone(e, map)) });
          walletAppend.events.push(clone(wallet, map));
        }
        appends.push(walletAppend);
        const p = ours.store.append(appends).then(() => { written += appends.reduce((n, a) => n + a.events.length, 0); inflight.delete(p); });
        inflight.add(p);
        if (inflight.size >= 4) await Promise.race(inflight);
      }
      await Promise.all(inflight);
      log(`rebuild: ${written} events generated in ${round((performance.now() - started) / 1000)} s`);
      // The events at rest, as in a database that has lived a while: just written, their pages are
      // still to be vacuumed and their rows' commit status to be stamped (hint bits), and whichever
      // reads them first pays for it (the rebuild, before the readAll ceiling measured after it).
      await settle(ours.db.knex);
      const m = await rebuildInItsOwnProcess(db.url);
      const eps = round((m.events * 1000) / m.elapsedMs);
      return {
        rebuild: judge({
          value: eps, unit: 'events/s', ceiling: round(m.readEps), ceilingName: 'reading the events alone (readAll)',
          target: { on: 'value', op: '>=', bound: 50_000 },
          details: { projection: m.projection, events: m.events, elapsedMs: m.elapsedMs, replayMs: round(m.replayMs), swapMs: round(m.elapsedMs - m.replayMs), generatedEvents: written },
        }),
      };
    } finally {
      await ours.close();
    }
  } finally {
    await db.drop();
  }
}
