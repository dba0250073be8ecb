// What the crash suite checks once the last life has settled. Two sides:
//  - through the API (the service still running): every acknowledged resource is there with the
//    amounts it was answered with, every payment reached the state its plan says (terminal, or
//    legitimately pending: a phone ending 98), webhook deliveries finished, the audit passes;
//  - straight from the database (the service stopped): the event store read through
//    PostgresEventStore (each collection and each successful disbursement recorded once, no orphan
//    resource), the sandbox provider's own books (each leg initiated once; a real provider's legs are
//    checked against its simulator's books, helpers/crash/mtn.ts), and every wallet stream
//    folded with the wallet decider, compared with GET /wallets and with what the settled payments say.
import type { Knex } from 'knex';
import { PostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import type { Database } from '../../../infra/db.ts';
import { systemClock } from '../../../infra/clock.ts';
import * as W from '../../../domain/wallet.ts';
import { WEBHOOK_EVENTS_BY_TYPE } from '../../../domain/webhook-events.ts';
import { verifyWebhook } from '../../../webhook-verifier/index.ts';
import type { Delivery } from '../webhooks.ts';
import type { Driver, PlannedPayment } from './driver.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const big = (v: unknown) => BigInt(String(v));

/** The state a payment must end in, by its plan; `pending` marks a legitimately pending one. */
export function expectedFinal(p: PlannedPayment): { status: string; pending: boolean; payin_status?: string; payout_status?: string } {
  if (p.kind !== 'transfer') {
    return p.plan === 'ok' ? { status: 'completed', pending: false } : p.plan === 'fail' ? { status: 'failed', pending: false } : { status: 'pending', pending: true };
  }
  if (p.plan === 'fail') return { status: 'failed', pending: false, payin_status: 'failed', payout_status: 'not_started' };
  if (p.plan === 'stuck') return { status: 'collecting', pending: true, payin_status: 'pending' };
  if (p.payoutPlan === 'stuck') return { status: 'disbursing', pending: true, payin_status: 'completed', payout_status: 'pending' };
  if (p.payoutPlan === 'fail' && !p.relaunched) return { status: 'failed', pending: false, payin_status: 'completed', payout_status: 'failed' };
  return { status: 'completed', pending: false, payin_status: 'completed', payout_status: 'completed' };
}

const matches = (body: any, e: ReturnType<typeof expectedFinal>) =>
  body?.status === e.status && (e.payin_status === undefined || body.payin_status === e.payin_status) &&
  (e.payout_status === undefined || body.payout_status === e.payout_status);

/** Polls every payment until it is in its planned state; answers the final bodies and the misses. */
export async function settleAll(driver: Driver, timeoutMs: number): Promise<{ finals: Map<string, any>; misses: string[] }> {
  const finals = new Map<string, any>();
  const deadline = Date.now() + timeoutMs;
  let open = [...driver.payments];
  while (open.length > 0) {
    const still: PlannedPayment[] = [];
    for (const p of open) {
      const r = await driver.call('GET', `/${p.kind}s/${p.id}`);
      finals.set(p.id, r.body);
      if (!matches(r.body, expectedFinal(p))) still.push(p);
    }
    open = still;
    if (open.length === 0 || Date.now() > deadline) break;
    await sleep(500);
  }
  const misses = open.map((p) => {
    const b = finals.get(p.id);
    return `${p.kind} ${p.id} (plan ${p.plan}${p.payoutPlan ? `/${p.payoutPlan}` : ''}${p.relaunched ? ', relaunched' : ''}): ` +
      `${b?.status}/${b?.payin_status ?? '-'}/${b?.payout_status ?? '-'}, expected ${JSON.stringify(expectedFinal(p))}`;
  });
  return { finals, misses };
}

/** Every acknowledged create is readable with the amounts it was answered with. */
export async function acknowledgedResources(driver: Driver): Promise<{ checked: number; problems: string[] }> {
  const problems: string[] = [];
  const fields: Record<string, string[]> = {
    customer: ['id', 'first_name', 'country_code'],
    quote: ['id', 'send_amount', 'receive_amount', 'total_fee'],
    payin: ['id', 'quote_id', 'send_amount', 'receive_amount', 'total_fee'],
    payout: ['id', 'quote_id', 'send_amount', 'receive_amount', 'total_fee'],
    transfer: ['id', 'quote_id', 'payin_amount', 'payout_amount', 'total_fee'],
    refund: ['id', 'payin_id', 'amount', 'currency'],
  };
  let checked = 0;
  for (const a of driver.acked) {
    if (a.kind === 'relaunch') {
      const r = await driver.call('GET', `/transfers/${a.id}`);
      const attempts = r.body?.execution?.disbursements?.length ?? 0;
      if (r.status !== 200 || attempts < 2) problems.push(`relaunch of ${a.id}: ${r.status}, ${attempts} disbursement attempts`);
      checked++;
      continue;
    }
    const r = await driver.call('GET', `/${a.kind}s/${a.id}`);
    if (r.status !== 200) {
      problems.push(`${a.kind} ${a.id} (acknowledged ${a.tries > 1 ? 'after a retry' : 'at once'}): GET ${r.status}`);
      continue;
    }
    for (const f of fields[a.kind]!) {
      if (String(r.body[f]) !== String(a.body[f])) problems.push(`${a.kind} ${a.id}: ${f} answered ${a.body[f]}, now ${r.body[f]}`);
    }
    if (a.kind === 'quote' && r.body.status !== 'consumed') problems.push(`quote ${a.id} is ${r.body.status}, its payment was acknowledged`);
    if (a.kind === 'refund') {
      // An acknowledged refund is claimed on its payin exactly once.
      const ids = ((await driver.call('GET', `/payins/${a.body.payin_id}`)).body?.refund_ids ?? []) as string[];
      if (ids.filter((id) => id === a.id).length !== 1) problems.push(`refund ${a.id}: its payin lists it ${ids.filter((id) => id === a.id).length} times`);
    }
    checked++;
  }
  return { checked, problems };
}

/** Waits until no webhook event of the merchant is still pending delivery. */
export async function webhooksDelivered(driver: Driver, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await driver.call('GET', '/events?delivery_status=pending&limit=100');
    const pending = r.body?.data?.length ?? -1;
    if (pending === 0 || Date.now() > deadline) return pending;
    await sleep(500);
  }
}

/** The merchant's balances as the settled payments say they must be. */
export function expectedWallets(payments: PlannedPayment[], finals: Map<string, any>, topUpsXof: bigint): Record<string, { available: bigint; reserved: bigint }> {
  const w = { XAF: { available: 0n, reserved: 0n }, XOF: { available: topUpsXof, reserved: 0n } } as Record<string, { available: bigint; reserved: bigint }>;
  for (const p of payments) {
    const b = finals.get(p.id);
    if (p.kind === 'payin') {
      if (b.status === 'completed') w[b.receive_currency]!.available += big(b.receive_amount);
    } else if (p.kind === 'refund') {
      // Held at create: posted on completion, released on failure (no fee).
      if (b.status !== 'failed') w[b.currency]!.available -= big(b.amount);
      if (b.status === 'pending') w[b.currency]!.reserved += big(b.amount);
    } else if (p.kind === 'payout') {
      // Held at create: posted on completion, released on failure.
      if (b.status !== 'failed') w.XOF!.available -= big(b.send_amount);
      if (b.status === 'pending') w.XOF!.reserved += big(b.send_amount);
    } else {
      if (b.payin_status === 'completed') w[b.payin_currency]!.available += big(b.payin_amount) - big(b.total_fee);
      if (b.payin_status === 'failed') continue; // the first hold was released
      const attempts = (b.execution?.disbursements ?? []) as Array<{ status: string; amount: string }>;
      if (attempts.length === 0) {
        // Collecting: the first disbursement's amount is held from create.
        w[b.payout_currency]!.available -= big(b.payout_amount);
        w[b.payout_currency]!.reserved += big(b.payout_amount);
      }
      for (const a of attempts) {
        if (a.status === 'failed') continue;
        w[b.payout_currency]!.available -= big(a.amount);
        if (a.status === 'pending') w[b.payout_currency]!.reserved += big(a.amount);
      }
    }
  }
  return w;
}

export interface StoreFigures {
  duplicates: string[];
  orphans: string[];
  providerProblems: string[];
  walletMismatches: string[];
  webhookProblems: string[];
  terminalEvents: number;
  webhookEvents: number;
  deliveries: number;
  redeliveries: number;
}

const TERMINAL: Record<string, string[]> = {
  payin: ['payin.completed', 'payin.failed'],
  payout: ['payout.completed', 'payout.failed'],
  refund: ['refund.completed', 'refund.failed'],
};

/** Checks straight from the database, with the service stopped (or, on PostgreSQL, beside it). */
export async function storeChecks(opts: {
  db: Database;
  merchantId: string;
  driver: Driver;
  finals: Map<string, any>;
  wallets: Record<string, { available: string; reserved: string }>;
  expected: Record<string, { available: bigint; reserved: bigint }>;
  deliveries: Delivery[];
  signingSecret: string;
}): Promise<StoreFigures> {
  const { db, driver, finals } = opts;
  const knex: Knex = db.knex;
  const store = new PostgresEventStore(db, systemClock);
  const f: StoreFigures = {
    duplicates: [], orphans: [], providerProblems: [], walletMismatches: [], webhookProblems: [],
    terminalEvents: 0, webhookEvents: 0, deliveries: opts.deliveries.length, redeliveries: 0,
  };
  const legs = new Map<string, { kind: string; state: string }>();
  for (const r of (await knex('sandbox_provider_legs').select('reference', 'kind', 'state')) as Array<{ reference: string; kind: string; state: string }>) {
    legs.set(r.reference, r);
  }

  // Webhook deliveries by event id, in arrival order; signatures checked on every one.
  const firstArrival = new Map<string, number>();
  opts.deliveries.forEach((d, i) => {
    let id: string;
    try {
      id = verifyWebhook<any>(d.body, d.headers as Record<string, string>, opts.signingSecret, { toleranceSeconds: 3600 }).id;
    } catch (err) {
      f.webhookProblems.push(`delivery ${d.n}: ${(err as Error).message}`);
      return;
    }
    if (firstArrival.has(id)) f.redeliveries++;
    else firstArrival.set(id, i);
  });

  const hooksOf = (kind: string) => WEBHOOK_EVENTS_BY_TYPE[kind]!;
  for (const p of driver.payments) {
    const events = await store.readStream(`${p.kind}-${p.id}`);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    const final = finals.get(p.id);
    if (p.kind === 'transfer') {
      const collections = count('transfer.payin.completed') + count('transfer.payin.failed');
      const disbursed = count('transfer.payout.completed');
      if (collections > 1) f.duplicates.push(`transfer ${p.id}: ${collections} collection outcomes`);
      if (disbursed > 1) f.duplicates.push(`transfer ${p.id}: ${disbursed} successful disbursements`);
      if (final.status === 'completed' && disbursed !== 1) f.duplicates.push(`transfer ${p.id} completed with ${disbursed} successful disbursements`);
      if (final.payin_status !== 'pending' && collections !== 1) f.duplicates.push(`transfer ${p.id}: collection ${final.payin_status} with ${collections} outcomes`);
      f.terminalEvents += collections + count('transfer.payout.completed') + count('transfer.payout.failed');
      // The provider's books: one collection leg; one leg per disbursement attempt, at most one paid.
      const collection = legs.get(`transfer:${p.id}:collection`);
      if (!collection) f.providerProblems.push(`transfer ${p.id}: no collection leg at the provider`);
      const attempts = (final.execution?.disbursements ?? []) as Array<{ leg_reference: string }>;
      const paid = attempts.filter((a) => legs.get(a.leg_reference)?.state === 'completed').length;
      if (paid > 1) f.providerProblems.push(`transfer ${p.id}: ${paid} disbursements paid by the provider`);
      if (final.status === 'completed' && paid !== 1) f.providerProblems.push(`transfer ${p.id} completed, ${paid} disbursements paid by the provider`);
    } else {
      const outcomes = TERMINAL[p.kind]!.reduce((n, type) => n + count(type), 0);
      const expected = final.status === 'pending' ? 0 : 1;
      if (outcomes !== expected) f.duplicates.push(`${p.kind} ${p.id} (${final.status}): ${outcomes} terminal events`);
      f.terminalEvents += outcomes;
      const leg = legs.get(p.id);
      if (p.provider) {
        if (leg) f.providerProblems.push(`${p.kind} ${p.id}: a leg at the sandbox, its leg went to ${p.provider}`);
      } else if (!leg) f.providerProblems.push(`${p.kind} ${p.id}: no leg at the provider`);
      else if (final.status !== 'pending' && leg.state !== final.status) f.providerProblems.push(`${p.kind} ${p.id}: ${final.status}, the provider says ${leg.state}`);
    }
    // Every webhook event of the stream arrived, and for the first time in stream order.
    const hooks = events.filter((e) => hooksOf(p.kind).includes(e.type));
    f.webhookEvents += hooks.length;
    let previous = -1;
    for (const h of hooks) {
      const at = firstArrival.get(h.id);
      if (at === undefined) {
        f.webhookProblems.push(`${p.kind} ${p.id}: ${h.type} (${h.id}) never delivered`);
        continue;
      }
      if (at < previous) f.webhookProblems.push(`${p.kind} ${p.id}: ${h.type} first arrived before an earlier event of the same ${p.kind}`);
      previous = Math.max(previous, at);
    }
  }

  // Orphans: a resource nobody was told about (a crashed create retried must reuse its id).
  const known = new Set(driver.acked.filter((a) => a.kind !== 'relaunch').map((a) => `${a.kind}-${a.id}`));
  const streamIds = (await knex('streams').select('stream_id').where((q) => {
    for (const k of ['customer', 'quote', 'payin', 'payout', 'transfer', 'refund']) q.orWhere('stream_id', 'like', `${k}-%`);
  })) as Array<{ stream_id: string }>;
  for (const { stream_id } of streamIds) if (!known.has(stream_id)) f.orphans.push(stream_id);

  // Every wallet: the decider's fold of its stream = GET /wallets = what the payments say.
  for (const currency of ['XAF', 'XOF']) {
    const events = await store.readStream(`wallet-${opts.merchantId}-${currency}`);
    const folded = events.reduce((s, e) => W.walletDecider.evolve(s, { type: e.type, data: e.data } as unknown as W.WalletEvent), W.walletDecider.initialState());
    const fold = { available: W.available(folded, opts.merchantId), reserved: W.reserved(folded, opts.merchantId) };
    const api = opts.wallets[currency];
    const exp = opts.expected[currency]!;
    if (!api || big(api.available) !== fold.available || big(api.reserved) !== fold.reserved) {
      f.walletMismatches.push(`${currency}: GET /wallets ${JSON.stringify(api)}, fold of ${events.length} events ${fold.available}/${fold.reserved}`);
    }
    if (fold.available !== exp.available || fold.reserved !== exp.reserved) {
      f.walletMismatches.push(`${currency}: fold ${fold.available}/${fold.reserved}, the settled payments say ${exp.available}/${exp.reserved}`);
    }
  }
  return f;
}
