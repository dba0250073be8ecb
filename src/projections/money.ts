// Read models of the money core: quotes, payins, payouts (the rendered API JSON next to the filter
// columns), wallets (balances) and ledger_entries (one row per posting, for statements and audits).
//
// A payment row keeps its stream's events; each new event is folded with the aggregate's own
// decider and rendered with the API's render function, so the read model, GET answers and webhook
// snapshots are the same JSON. Idempotent: an event at or below the row's version is skipped.
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
import type { Projection } from './projection.ts';
import { upsertRows } from './upsert.ts';
import type { RowCache } from './row-cache.ts';

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

/**
 * Applies a batch's events of one model's streams: one read of the rows they touch and one upsert
 * of the rows that changed, whatever the batch size (a query per event would make the projector,
 * which read-your-writes waits on, the bottleneck of every create under load).
 */
export async function applyToStreams<S, E extends DomainEvent>(tx: Knex.Transaction, m: StreamModel<S, E>, batch: RecordedEvent[], cache?: RowCache): Promise<void> {
  const byId = new Map<string, RecordedEvent[]>();
  for (const r of batch) {
    if (!r.streamId.startsWith(m.prefix)) continue;
    const id = r.streamId.slice(m.prefix.length);
    const list = byId.get(id);
    if (list) list.push(r);
    else byId.set(id, [r]);
  }
  if (byId.size === 0) return;
  // Rows this projector wrote itself (and nobody moved since) are not read back.
  const rows = new Map<string, { version: number; events: E[] }>();
  const unknown: string[] = [];
  for (const id of byId.keys()) {
    const cached = cache?.get(m.table, id);
    if (cached) rows.set(id, cached as { version: number; events: E[] });
    else unknown.push(id);
  }
  if (unknown.length > 0) {
    const found = (await tx.raw<{ rows: Array<{ id: string; version: number; events: E[] }> }>(
      `SELECT id, version, events FROM ${m.table} WHERE id = ANY(?::uuid[])`, [unknown])).rows;
    for (const row of found) rows.set(row.id, row);
  }
  const changed: Array<Record<string, unknown>> = [];
  for (const [id, records] of byId) {
    const row = rows.get(id);
    let have = row?.version ?? 0;
    const events = [...(row?.events ?? [])];
    for (const r of records) {
      if (r.version <= have) continue; // already applied
      invariant(r.version === have + 1, `${m.table} ${id}: event ${r.version} after ${have}`);
      events.push({ type: r.type, data: r.data } as unknown as E);
      have = r.version;
    }
    if (have === (row?.version ?? 0)) continue;
    changed.push({ id, ...m.columns(fold(m.decider, events)), version: have, events });
    cache?.put(m.table, id, { version: have, events });
  }
  await upsertRows(tx, m.table, ['id'], changed, 'update');
}

/** The kind of movement and the id it is idempotent by. */
function movementOf(e: WalletEvent): { movement: string; id: string } {
  switch (e.type) {
    case 'wallet.topped_up': return { movement: 'top_up', id: e.data.entry_id };
    case 'wallet.funds_held': return { movement: 'hold', id: e.data.hold_id };
    case 'wallet.hold_posted': return { movement: 'post', id: e.data.hold_id };
    case 'wallet.hold_released': return { movement: 'release', id: e.data.hold_id };
    case 'wallet.credited': return { movement: 'credit', id: e.data.credit_id };
    default: return unreachable(e);
  }
}

async function applyToWallets(tx: Knex.Transaction, batch: RecordedEvent[]): Promise<void> {
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
  if (newest.size === 0) return;
  const wallets = [...newest.values()];
  await tx.raw(
    `INSERT INTO wallets (merchant_id, currency, available, reserved, version, updated_at) VALUES ${wallets.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
     ON CONFLICT (merchant_id, currency) DO UPDATE SET available = excluded.available, reserved = excluded.reserved,
       version = excluded.version, updated_at = excluded.updated_at
     WHERE wallets.version < excluded.version`,
    wallets.flatMap(({ r, d }) => [d.merchant_id, d.currency, d.balances.available, d.balances.reserved, r.version, d.at]),
  );
  await upsertRows(tx, 'ledger_entries', ['event_id', 'posting_index'], ledger, 'ignore');
}

export const moneyProjection: Projection = {
  name: 'money',
  tables: ['quotes', 'payins', 'payouts', 'wallets', 'ledger_entries'],
  async apply(tx, events, rows) {
    // The tables are independent of one another: each is written once per batch.
    await applyToStreams(tx, quoteModel, events, rows);
    await applyToStreams(tx, payinModel, events, rows);
    await applyToStreams(tx, payoutModel, events, rows);
    await applyToWallets(tx, events);
  },
};
