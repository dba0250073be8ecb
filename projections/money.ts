// Read models of the money core: quotes, payins, payouts (the rendered API JSON next to the filter
// columns), wallets (balances) and ledger_entries (one row per posting, for statements and audits).
//
// A payment row is its stream folded with the aggregate's own decider and rendered with the API's
// render function, so the read model, GET answers and webhook snapshots are the same JSON. Its
// version is the stream's: a write never replaces a row with an older one.
import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import { fold, unreachable, type Decider, type DomainEvent } from '../domain/decider.ts';
import { invariant } from '../domain/errors.ts';
import { quoteDecider, type QuoteEvent, type QuoteState } from '../domain/quote.ts';
import { payinDecider, type PayinEvent, type PayinState } from '../domain/payin.ts';
import { payoutDecider, type PayoutEvent, type PayoutState } from '../domain/payout.ts';
import type { WalletEvent } from '../domain/wallet.ts';
import { renderQuote } from './views/quote.ts';
import { renderPayin } from './views/payin.ts';
import { renderPayout } from './views/payout.ts';
import type { ApplyContext, BatchWrite, Projection } from './projection.ts';
import type { HistoryWant } from './history.ts';
import { upsertRows } from './upsert.ts';

export interface StreamModel<S, E extends DomainEvent> {
  prefix: string;
  table: string;
  decider: Decider<S, E>;
  /** The filter columns and the rendered body of a row (jsonb columns as values, not JSON text). */
  columns(state: S): Record<string, unknown>;
}

const quoteModel: StreamModel<QuoteState, QuoteEvent> = {
  prefix: 'quote-',
  table: 'quotes',
  decider: quoteDecider,
  columns: (s) => ({
    merchant_id: s.quote!.merchant_id, customer_id: s.quote!.customer_id, flow_type: s.quote!.flow_type,
    status: s.consumed ? 'consumed' : 'active', expires_at: s.quote!.expires_at, created_at: s.quote!.at,
    body: renderQuote(s),
  }),
};

const payinModel: StreamModel<PayinState, PayinEvent> = {
  prefix: 'payin-',
  table: 'payins',
  decider: payinDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, customer_id: s.created!.customer_id, quote_id: s.created!.quote_id,
    payment_link_id: s.created!.payment_link_id ?? null,
    status: s.status, created_at: s.created!.at, updated_at: s.updated_at, body: renderPayin(s),
  }),
};

const payoutModel: StreamModel<PayoutState, PayoutEvent> = {
  prefix: 'payout-',
  table: 'payouts',
  decider: payoutDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, customer_id: s.created!.customer_id, quote_id: s.created!.quote_id,
    status: s.status, created_at: s.created!.at, updated_at: s.updated_at, body: renderPayout(s),
  }),
};

/** A stream's state before a batch: its version and the events that make it. */
interface Base<E> {
  version: number;
  events: E[];
}

/** Streams folded between two turns of the event loop (a rebuild's writes go on meanwhile). */
const STREAMS_PER_TURN = 100;

/**
 * Applies a batch's events of one model's streams with one upsert of the rows that changed,
 * whatever the batch size (a query per event would make the projector, which read-your-writes
 * waits on, the bottleneck of every create under load). The rows are never read back: a stream's
 * earlier events are in memory (the row cache), or there are none (the batch starts the stream),
 * or they are read from the event store in one query for the batch (history.ts).
 *
 * In two steps (Projection.prepare): the rows computed, then a function that writes them.
 */
export async function prepareStreams<S, E extends DomainEvent>(db: Knex | Knex.Transaction, m: StreamModel<S, E>, batch: RecordedEvent[],
  ctx: ApplyContext): Promise<BatchWrite> {
  const byId = new Map<string, RecordedEvent[]>();
  for (const r of batch) {
    if (!r.streamId.startsWith(m.prefix)) continue;
    const id = r.streamId.slice(m.prefix.length);
    const list = byId.get(id);
    if (list) list.push(r);
    else byId.set(id, [r]);
  }
  if (byId.size === 0) return nothing;
  const bases = await basesOf(db, m, byId, ctx);
  const changed: Array<Record<string, unknown>> = [];
  const started: Array<Record<string, unknown>> = []; // streams this batch starts: no row yet
  let folded = 0;
  for (const [id, records] of byId) {
    // A large batch (a rebuild's) lets the event loop turn now and then: the previous batch's
    // statements, waiting on it, go on meanwhile.
    if (++folded % STREAMS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const base = bases.get(id)!;
    let have = base.version;
    const events = [...base.events];
    for (const r of records) {
      if (r.version <= have) continue; // already in the cached state
      invariant(r.version === have + 1, `${m.table} ${id}: event ${r.version} after ${have}`);
      events.push({ type: r.type, data: r.data } as unknown as E);
      have = r.version;
    }
    if (have === base.version) continue;
    (base.version === 0 && ctx.insertNew ? started : changed).push({ id, ...m.columns(fold(m.decider, events)), version: have });
    ctx.rows?.put(m.table, id, { version: have, events });
  }
  return async (tx) => {
    await ctx.insertNew?.(tx, m.table, started);
    // A row never goes back to an older version (a process that read the store before another wrote).
    await upsertRows(tx, m.table, ['id'], changed, 'update-if-newer');
  };
}

const nothing: BatchWrite = async () => undefined;

async function basesOf<S, E extends DomainEvent>(db: Knex | Knex.Transaction, m: StreamModel<S, E>, byId: Map<string, RecordedEvent[]>,
  ctx: ApplyContext): Promise<Map<string, Base<E>>> {
  const bases = new Map<string, Base<E>>();
  const wants: HistoryWant[] = [];
  for (const [id, records] of byId) {
    const cached = ctx.rows?.get(m.table, id);
    const first = records[0]!.version;
    if (cached) bases.set(id, cached as Base<E>);
    else if (first === 1) bases.set(id, { version: 0, events: [] });
    else wants.push({ streamId: m.prefix + id, before: first });
  }
  if (wants.length === 0) return bases;
  const found = await ctx.history(db, wants);
  for (const w of wants) {
    const past = found.get(w.streamId) ?? [];
    invariant(past.length === w.before - 1 && past.every((e, i) => e.version === i + 1),
      `${w.streamId}: the store holds ${past.length} events before version ${w.before}`);
    bases.set(w.streamId.slice(m.prefix.length), { version: w.before - 1, events: past.map((e) => ({ type: e.type, data: e.data }) as unknown as E) });
  }
  return bases;
}

/** The kind of movement and the id it is idempotent by. */
export function movementOf(e: WalletEvent): { movement: string; id: string } {
  switch (e.type) {
    case 'wallet.topped_up': return { movement: 'top_up', id: e.data.entry_id };
    case 'wallet.funds_held': return { movement: 'hold', id: e.data.hold_id };
    case 'wallet.hold_posted': return { movement: 'post', id: e.data.hold_id };
    case 'wallet.hold_released': return { movement: 'release', id: e.data.hold_id };
    case 'wallet.credited': return { movement: 'credit', id: e.data.credit_id };
    default: return unreachable(e);
  }
}

function prepareWallets(batch: RecordedEvent[], ctx: ApplyContext): BatchWrite {
  // Balances as the newest event of each wallet in the batch states them (after its postings):
  // a replay rewrites the same values, and an older event never overwrites a newer one.
  const newest = new Map<string, { r: RecordedEvent; d: WalletEvent['data'] }>();
  const ledger: Array<Record<string, unknown>> = [];
  for (const r of batch) {
    if (!r.streamId.startsWith('wallet-')) continue;
    const e = { type: r.type, data: r.data } as unknown as WalletEvent;
    const kind = movementOf(e);
    const d = e.data;
    const key = `${d.merchant_id}/${d.currency}`;
    const before = newest.get(key);
    if (!before || before.r.version < r.version) newest.set(key, { r, d });
    d.postings.forEach((p, i) => ledger.push({
      event_id: r.id, posting_index: i, global_position: r.position.toString(), merchant_id: d.merchant_id, currency: d.currency,
      movement: kind.movement, movement_id: kind.id, reference_type: d.reference.type, reference_id: d.reference.id,
      account: p.account, side: p.side, amount: p.amount, created_at: d.at,
    }));
  }
  if (newest.size === 0) return nothing;
  const wallets = [...newest.values()];
  return async (tx) => {
    await tx.raw(
      `INSERT INTO wallets (merchant_id, currency, available, reserved, version, updated_at) VALUES ${wallets.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (merchant_id, currency) DO UPDATE SET available = excluded.available, reserved = excluded.reserved,
         version = excluded.version, updated_at = excluded.updated_at
       WHERE wallets.version < excluded.version`,
      wallets.flatMap(({ r, d }) => [d.merchant_id, d.currency, d.balances.available, d.balances.reserved, r.version, d.at]),
    );
    // Each event is applied once where rows are known new (a rebuild's shadow); elsewhere a replayed one is ignored.
    if (ctx.insertNew) await ctx.insertNew(tx, 'ledger_entries', ledger);
    else await upsertRows(tx, 'ledger_entries', ['event_id', 'posting_index'], ledger, 'ignore');
  };
}

/** The money tables' rows for a batch (Projection.prepare); they are independent of one another, each written once. */
async function prepareMoney(db: Knex | Knex.Transaction, events: RecordedEvent[], ctx: ApplyContext): Promise<BatchWrite> {
  const writes = [
    await prepareStreams(db, quoteModel, events, ctx),
    await prepareStreams(db, payinModel, events, ctx),
    await prepareStreams(db, payoutModel, events, ctx),
    prepareWallets(events, ctx),
  ];
  return async (tx) => {
    for (const write of writes) await write(tx);
  };
}

export const moneyProjection: Projection = {
  name: 'money',
  tables: ['quotes', 'payins', 'payouts', 'wallets', 'ledger_entries'],
  async apply(tx, events, ctx) {
    await (await prepareMoney(tx, events, ctx))(tx);
  },
  prepare: prepareMoney,
};
