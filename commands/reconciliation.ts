// Reconciliation (CONTRACT §15, issue 41 point 6): every provider leg started in a period, our
// outcome beside the provider's. Read-only on our side: it reports, it never records an outcome (the
// gateway's status checks do that). On the provider's side it is a status query per leg, as the
// gateway's own checks make (the sandbox settles a leg that is due when asked, as always).
//
// Per leg, in pages of `provider_legs` ordered by (created_at, reference), a few at a time:
//   1. the provider's status (first: a leg that settles meanwhile is then seen settled by us too, or
//      shows as ours pending / theirs final; ours final and theirs pending is asked again once, in
//      case the gateway recorded the outcome between the two reads);
//   2. our outcome, folded from the owner's stream (the truth, not a read model that may lag);
//   3. classified: `disagrees` (both final and different; ours pending and theirs final; ours final
//      and theirs pending), `not_seen` (the provider does not know the reference while ours is
//      pending or completed), `pending_too_long` (both pending, started more than the alert age
//      ago), `unreachable` (the status query failed: listed, never dropped). Anything else agrees
//      and is only counted; a leg we failed that the provider never saw agrees too: it was refused
//      at its start (or never taken) and no money moved on either side.
import type { Knex } from 'knex';
import type { Clock } from '../infra/clock.ts';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { LegKind, ProviderAdapter, ProviderStatus } from '../infra/providers/types.ts';
import { fold, type Decider, type DomainEvent } from '../domain/decider.ts';
import { invariant } from '../domain/errors.ts';
import { payinDecider } from '../domain/payin.ts';
import { payoutDecider } from '../domain/payout.ts';
import { refundDecider } from '../domain/refund.ts';
import { transferDecider, type TransferState } from '../domain/transfer.ts';
import type { PaymentStatus } from '../domain/payment.ts';
import { streams } from './streams.ts';

export type LegState = 'pending' | 'completed' | 'failed';
export const FINDINGS = ['disagrees', 'not_seen', 'pending_too_long', 'unreachable'] as const;
export type FindingKind = (typeof FINDINGS)[number];

export interface ReconciliationFinding {
  reference: string;
  /** The aggregate that owns the leg: payin, payout, refund or transfer. */
  owner: string;
  kind: string;
  provider: string;
  /** The provider's reference: from its answer, else the one recorded at the start (null: none yet). */
  provider_reference: string | null;
  ours: LegState;
  /** null: the provider does not know the leg, or could not be asked. */
  theirs: LegState | null;
  finding: FindingKind;
  /** The provider's failure code when it says failed, the error of an unreachable provider; else null. */
  detail: string | null;
  created_at: string;
}

export interface ReconciliationReport {
  /** null: every provider. */
  provider: string | null;
  from: string;
  to: string;
  pending_alert_seconds: number;
  checked: number;
  agreeing: number;
  counts: Record<FindingKind, number>;
  /** In leg order: created_at, then reference. */
  findings: ReconciliationFinding[];
}

export interface ReconciliationQuery {
  provider?: string | undefined;
  from: Date;
  to: Date;
}

/** What a reconciliation reads: the service's, or a CLI's own. */
export interface ReconciliationDeps {
  knex: Knex;
  store: EventStore;
  clock: Clock;
  adapters: ReadonlyMap<string, ProviderAdapter>;
  pendingAlertSeconds: number;
}

export interface ReconciliationOptions {
  /** Periods with more legs are refused (PeriodTooLarge) before any provider is asked. */
  maxLegs?: number;
  pageSize?: number;
  /** Provider status queries in flight at once. */
  concurrency?: number;
  /** After each leg: how many were checked, of how many (the total may grow if legs start meanwhile). */
  onProgress?: (done: number, total: number) => void;
}

/** The period has more legs than one reconciliation takes: ask for a shorter one. */
export class PeriodTooLarge extends Error {
  override name = 'PeriodTooLarge';
  constructor(readonly legs: number, readonly max: number) {
    super(`the period has ${legs} legs, more than the ${max} one reconciliation checks: ask for a shorter period`);
  }
}

export const MAX_LEGS = 100_000;
const PAGE_SIZE = 500;
const CONCURRENCY = 8;
const DETAIL_MAX = 200;

interface LegRow {
  reference: string;
  owner: string;
  provider: string;
  kind: string;
  provider_reference: string | null;
  /** Microsecond text (UTC), the page cursor: a Date would round it to the millisecond. */
  created_text: string;
}

const periodWhere = (q: ReconciliationQuery) => (b: Knex.QueryBuilder) => {
  b.where('created_at', '>=', q.from.toISOString()).andWhere('created_at', '<', q.to.toISOString());
  if (q.provider) b.andWhere('provider', q.provider);
};

async function countLegs(knex: Knex, q: ReconciliationQuery): Promise<number> {
  const row = (await knex('provider_legs').modify(periodWhere(q)).count<{ n: string | number }[]>({ n: '*' }))[0];
  return Number(row?.n ?? 0);
}

/** The next page after `after` (created_text, reference), in leg order. */
async function legPage(knex: Knex, q: ReconciliationQuery, after: [string, string] | undefined, size: number): Promise<LegRow[]> {
  const b = knex('provider_legs').modify(periodWhere(q))
    .select('reference', 'owner', 'provider', 'kind', 'provider_reference',
      knex.raw(`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_text`))
    .orderBy([{ column: 'created_at' }, { column: 'reference' }]).limit(size);
  if (after) b.whereRaw('(created_at, reference) > (?::timestamptz, ?)', after);
  return (await b) as LegRow[];
}

const asLegState = (s: PaymentStatus | 'not_started'): LegState => (s === 'completed' || s === 'failed' ? s : 'pending');

async function folded<S, E extends DomainEvent>(store: EventStore, streamId: string, decider: Decider<S, E>): Promise<S> {
  const events = await store.readStream(streamId, 1);
  return fold(decider, events.map((e) => ({ type: e.type, data: e.data }) as unknown as E));
}

function transferLegState(s: TransferState, reference: string): LegState {
  invariant(s.exists, `leg ${reference}: its transfer has no events`);
  if (reference.endsWith(':collection')) return asLegState(s.payin_status);
  const attempt = s.attempts.find((a) => a.leg_reference === reference);
  invariant(attempt, `leg ${reference}: no such disbursement attempt on its transfer`);
  return asLegState(attempt.status);
}

/** Our outcome of the leg, from its owner's stream (commands/leg-owners.ts names each owner's references). */
async function ourState(store: EventStore, leg: LegRow): Promise<LegState> {
  const payment = <S extends { exists: boolean; status: PaymentStatus }>(st: S) => {
    invariant(st.exists, `leg ${leg.reference}: its ${leg.owner} has no events`);
    return asLegState(st.status);
  };
  switch (leg.owner) {
    case 'payin': return payment(await folded(store, streams.payin(leg.reference), payinDecider));
    case 'payout': return payment(await folded(store, streams.payout(leg.reference), payoutDecider));
    case 'refund': return payment(await folded(store, streams.refund(leg.reference), refundDecider));
    case 'transfer': {
      const transferId = /^transfer:([0-9a-f-]{36}):/.exec(leg.reference)?.[1];
      invariant(transferId, `not a transfer leg reference: ${leg.reference}`);
      return transferLegState(await folded(store, streams.transfer(transferId), transferDecider), leg.reference);
    }
    default: throw new Error(`leg ${leg.reference}: unknown owner ${leg.owner}`);
  }
}

/** The finding for one leg (undefined: it agrees). */
function classify(ours: LegState, theirs: ProviderStatus | undefined, ageSeconds: number, alertSeconds: number): FindingKind | undefined {
  if (!theirs) return ours === 'failed' ? undefined : 'not_seen';
  if (ours !== theirs.state) return 'disagrees';
  return ours === 'pending' && ageSeconds > alertSeconds ? 'pending_too_long' : undefined;
}

type Asked = { theirs: ProviderStatus | undefined } | { error: string };

async function askProvider(adapters: ReadonlyMap<string, ProviderAdapter>, leg: LegRow): Promise<Asked> {
  const adapter = adapters.get(leg.provider);
  if (!adapter) return { error: `provider ${leg.provider} is not configured here` };
  try {
    return { theirs: await adapter.status({ reference: leg.reference, kind: leg.kind as LegKind }) };
  } catch (err) {
    return { error: (err instanceof Error ? err.message : String(err)).slice(0, DETAIL_MAX) || 'status query failed' };
  }
}

/** One leg checked: its finding, or undefined when it agrees. */
async function checkLeg(d: ReconciliationDeps, leg: LegRow): Promise<ReconciliationFinding | undefined> {
  let asked = await askProvider(d.adapters, leg);
  const ours = await ourState(d.store, leg);
  // Ours final and theirs pending: it may have settled between the two reads (the gateway recorded
  // it meanwhile); the provider's word now is the one to compare.
  if (ours !== 'pending' && 'theirs' in asked && asked.theirs?.state === 'pending') asked = await askProvider(d.adapters, leg);
  const createdAt = new Date(leg.created_text);
  const base = {
    reference: leg.reference, owner: leg.owner, kind: leg.kind, provider: leg.provider,
    provider_reference: leg.provider_reference, ours, created_at: createdAt.toISOString(),
  };
  if ('error' in asked) return { ...base, theirs: null, finding: 'unreachable', detail: asked.error };
  const { theirs } = asked;
  const age = (d.clock.now().getTime() - createdAt.getTime()) / 1000;
  const finding = classify(ours, theirs, age, d.pendingAlertSeconds);
  if (!finding) return undefined;
  return {
    ...base,
    provider_reference: theirs?.providerReference ?? leg.provider_reference,
    theirs: theirs?.state ?? null,
    finding,
    detail: theirs?.state === 'failed' ? theirs.reason.slice(0, DETAIL_MAX) : null,
  };
}

/** Runs `fn` on each item, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Every leg of the period (of one provider, or all) checked against its provider. */
export async function reconcile(d: ReconciliationDeps, q: ReconciliationQuery, o: ReconciliationOptions = {}): Promise<ReconciliationReport> {
  const maxLegs = o.maxLegs ?? MAX_LEGS;
  let total = await countLegs(d.knex, q);
  if (total > maxLegs) throw new PeriodTooLarge(total, maxLegs);
  const findings: ReconciliationFinding[] = [];
  let checked = 0;
  o.onProgress?.(0, total);
  for (let after: [string, string] | undefined; ;) {
    const page = await legPage(d.knex, q, after, o.pageSize ?? PAGE_SIZE);
    if (page.length === 0) break;
    // Checked a few at a time, listed in leg order.
    const found: Array<ReconciliationFinding | undefined> = [];
    await eachLimited([...page.keys()], o.concurrency ?? CONCURRENCY, async (i) => {
      found[i] = await checkLeg(d, page[i]!);
      checked += 1;
      total = Math.max(total, checked);
      o.onProgress?.(checked, total);
    });
    for (const f of found) if (f) findings.push(f);
    const last = page[page.length - 1]!;
    after = [last.created_text, last.reference];
  }
  const counts = Object.fromEntries(FINDINGS.map((k) => [k, findings.filter((f) => f.finding === k).length])) as Record<FindingKind, number>;
  return {
    provider: q.provider ?? null, from: q.from.toISOString(), to: q.to.toISOString(), pending_alert_seconds: d.pendingAlertSeconds,
    checked, agreeing: checked - findings.length, counts, findings,
  };
}
