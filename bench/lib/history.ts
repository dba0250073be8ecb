// The history scenario's tools: a long wallet history written set-wise through the event store's
// own append (the events the wallet's decider decides for a top-up, in big batches), waiting for
// the service's readers to catch up with it, a merchant's payout (quote + payout) timed, and the
// audit and a projection rebuild timed in events/s.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import * as W from '../../domain/wallet.ts';
import { toNew } from '../../commands/aggregates.ts';
import type { EventStore, RecordedEvent, StreamAppend } from '../../infra/eventstore/types.ts';
import { MAX_EVENTS_PER_APPEND } from '../../infra/eventstore/check-append.ts';
import { runAudit } from '../../projections/finance-audit.ts';
import { projections } from '../../app/registry.ts';
import { asMerchant, type Merchant } from './api.ts';
import type { RebuildMeasure } from './rebuild-measure.ts';
import { ROOT } from './service.ts';

const run = promisify(execFile);
/** Events per append (one statement and one commit each): the most one append takes for one stream. */
const BATCH = MAX_EVENTS_PER_APPEND;

/**
 * What the service wrote for one top-up besides the wallet's `wallet.topped_up` (the events after
 * `after`, a top-up made through the operator API): a top-up's own stream, say, cloned with a
 * fresh id for each movement of the history. None with a service that writes the wallet alone.
 */
export interface TopUpTemplate { entryId: string; companions: RecordedEvent[] }

export async function topUpTemplate(store: EventStore, walletStream: string, after: bigint): Promise<TopUpTemplate> {
  const events = await store.readAll(after, 100);
  const w = events.find((e) => e.streamId === walletStream && e.type === 'wallet.topped_up');
  if (!w) throw new Error(`no wallet.topped_up on ${walletStream} after position ${after}`);
  const entryId = String(w.data.entry_id);
  return { entryId, companions: events.filter((e) => e.streamId !== walletStream && e.streamId.includes(entryId)) };
}

function companionsFor(t: TopUpTemplate, entryId: string): StreamAppend[] {
  const byStream = new Map<string, StreamAppend>();
  for (const e of t.companions) {
    const streamId = e.streamId.split(t.entryId).join(entryId);
    const a = byStream.get(streamId) ?? { streamId, expectedVersion: 0, events: [] };
    a.events.push({ type: e.type, data: JSON.parse(JSON.stringify(e.data).split(t.entryId).join(entryId)) as Record<string, unknown>, metadata: e.metadata });
    byStream.set(streamId, a);
  }
  return [...byStream.values()];
}

/**
 * Appends `count` top-ups of `amount` to the wallet stream `streamId` (merchant `merchantId`,
 * `currency`), after what it holds: each decided by the wallet's decider on the state the previous
 * one left, as the service decides them (commands/wallets.ts), with the template's companion
 * streams; appended 1,000 at a time (the most one append takes for one stream).
 */
export async function appendTopUps(store: EventStore, w: { streamId: string; merchantId: string; currency: string }, t: TopUpTemplate, count: number, amount: bigint, log: (s: string) => void): Promise<number> {
  const existing = await store.readStream(w.streamId);
  let state = existing.reduce((s, e) => W.walletDecider.evolve(s, e as unknown as W.WalletEvent), W.walletDecider.initialState());
  let version = existing.length;
  const meta = { requestId: 'bench-history' };
  const started = performance.now();
  for (let done = 0; done < count;) {
    const n = Math.min(BATCH, count - done);
    const decided: W.WalletEvent[] = [];
    const companions: StreamAppend[] = [];
    for (let i = 0; i < n; i++) {
      const at = new Date().toISOString();
      const entryId = randomUUID();
      const events = W.topUp(state, { merchantId: w.merchantId, currency: w.currency, at, entryId, amount });
      for (const e of events) state = W.walletDecider.evolve(state, e);
      decided.push(...events);
      companions.push(...companionsFor(t, entryId));
    }
    await store.append([...companions, { streamId: w.streamId, expectedVersion: version, events: toNew(decided, meta) }]);
    version += decided.length;
    done += n;
    if (done % 100_000 === 0) log(`history: ${done} movements appended`);
  }
  return performance.now() - started;
}

/** Until every reader's checkpoint (projector, forwarder…) is at the store's head, or `ms` passed. */
export async function waitForReaders(knex: Knex, store: EventStore, ms: number): Promise<{ waitedMs: number; lagging: string[] }> {
  const started = performance.now();
  for (;;) {
    const head = await store.head();
    const rows = (await knex.raw('SELECT name, position FROM checkpoints')).rows as Array<{ name: string; position: string }>;
    const lagging = rows.filter((r) => BigInt(r.position) < head).map((r) => r.name);
    if (lagging.length === 0 || performance.now() - started > ms) return { waitedMs: performance.now() - started, lagging };
    await new Promise((r) => setTimeout(r, 250));
  }
}

export const PAYOUT_LEG = { country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', send_amount: '5000', send_currency: 'XAF' };

/** A payout quote then the payout (which holds the funds on the merchant's wallet), each timed. */
export async function timedPayout(base: string, m: Merchant): Promise<{ quoteMs: number; payoutMs: number; totalMs: number }> {
  const t0 = performance.now();
  const q = await asMerchant(base, m, 'POST', '/quotes/payout', { ...PAYOUT_LEG, customer_id: m.customerId });
  if (q.status !== 201) throw new Error(`payout quote: HTTP ${q.status} ${JSON.stringify(q.body)}`);
  const t1 = performance.now();
  const p = await asMerchant(base, m, 'POST', '/payouts', {
    quote_id: q.body.id, customer_id: m.customerId, payment_reason_text: 'Bench',
    recipient: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000098', recipient_type: 'individual' },
  });
  if (p.status !== 201) throw new Error(`payout: HTTP ${p.status} ${JSON.stringify(p.body)}`);
  const t2 = performance.now();
  return { quoteMs: t1 - t0, payoutMs: t2 - t1, totalMs: t2 - t0 };
}

/** The finance audit (ledger replay and read models against a fresh fold), as `npm run audit` runs it. */
export async function timedAudit(knex: Knex, store: EventStore): Promise<{ events: number; elapsedMs: number; ok: boolean; discrepancies: number }> {
  const t0 = performance.now();
  const report = await runAudit(knex, store, projections);
  return { events: report.ledger.summary.events, elapsedMs: performance.now() - t0, ok: report.ok, discrepancies: report.discrepancies };
}

/** bench/rebuild-profile.ts in a child process: the money projection rebuilt as an operator's CLI would. */
export async function rebuildInItsOwnProcess(databaseUrl: string): Promise<RebuildMeasure> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/rebuild-profile.ts'), databaseUrl, '--json'],
    { cwd: ROOT, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as RebuildMeasure;
}
