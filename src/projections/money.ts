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

export interface StreamModel<S, E extends DomainEvent> {
  prefix: string;
  table: string;
  decider: Decider<S, E>;
  /** The filter columns and the rendered body of a row. */
  columns(state: S): Record<string, unknown>;
}

const quoteModel: StreamModel<QuoteState, QuoteEvent> = {
  prefix: 'quote-',
  table: 'quotes',
  decider: quoteDecider,
  columns: (s) => ({
    merchant_id: s.quote!.merchant_id, customer_id: s.quote!.customer_id, flow_type: s.quote!.flow_type,
    status: s.consumed ? 'consumed' : 'active', expires_at: s.quote!.expires_at, created_at: s.quote!.at,
    body: JSON.stringify(renderQuote(s)),
  }),
};

const payinModel: StreamModel<PayinState, PayinEvent> = {
  prefix: 'payin-',
  table: 'payins',
  decider: payinDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, customer_id: s.created!.customer_id, quote_id: s.created!.quote_id,
    status: s.status, created_at: s.created!.at, updated_at: s.updated_at, body: JSON.stringify(renderPayin(s)),
  }),
};

const payoutModel: StreamModel<PayoutState, PayoutEvent> = {
  prefix: 'payout-',
  table: 'payouts',
  decider: payoutDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, customer_id: s.created!.customer_id, quote_id: s.created!.quote_id,
    status: s.status, created_at: s.created!.at, updated_at: s.updated_at, body: JSON.stringify(renderPayout(s)),
  }),
};

export async function applyToStream<S, E extends DomainEvent>(tx: Knex.Transaction, m: StreamModel<S, E>, r: RecordedEvent): Promise<void> {
  const id = r.streamId.slice(m.prefix.length);
  const row = (await tx(m.table).where({ id }).first('version', 'events')) as { version: number; events: E[] } | undefined;
  const have = row?.version ?? 0;
  if (r.version <= have) return; // already applied
  invariant(r.version === have + 1, `${m.table} ${id}: event ${r.version} after ${have}`);
  const events = [...(row?.events ?? []), { type: r.type, data: r.data } as unknown as E];
  const cols = { ...m.columns(fold(m.decider, events)), version: r.version, events: JSON.stringify(events) };
  if (row) await tx(m.table).where({ id }).update(cols);
  else await tx(m.table).insert({ id, ...cols });
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

async function applyToWallet(tx: Knex.Transaction, r: RecordedEvent): Promise<void> {
  const e = { type: r.type, data: r.data } as unknown as WalletEvent;
  const kind = movementOf(e);
  const d = e.data;
  // Balances as the event states them (after its postings): a replay rewrites the same values.
  await tx.raw(
    `INSERT INTO wallets (merchant_id, currency, available, reserved, version, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (merchant_id, currency) DO UPDATE SET available = excluded.available, reserved = excluded.reserved,
       version = excluded.version, updated_at = excluded.updated_at
     WHERE wallets.version < excluded.version`,
    [d.merchant_id, d.currency, d.balances.available, d.balances.reserved, r.version, d.at],
  );
  const rows = d.postings.map((p, i) => ({
    event_id: r.id, posting_index: i, global_position: r.position.toString(), merchant_id: d.merchant_id, currency: d.currency,
    movement: kind.movement, movement_id: kind.id, reference_type: d.reference.type, reference_id: d.reference.id,
    account: p.account, side: p.side, amount: p.amount, created_at: d.at,
  }));
  if (rows.length > 0) await tx('ledger_entries').insert(rows).onConflict(['event_id', 'posting_index']).ignore();
}

export const moneyProjection: Projection = {
  name: 'money',
  tables: ['quotes', 'payins', 'payouts', 'wallets', 'ledger_entries'],
  async apply(tx, events) {
    for (const e of events) {
      if (e.streamId.startsWith('quote-')) await applyToStream(tx, quoteModel, e);
      else if (e.streamId.startsWith('payin-')) await applyToStream(tx, payinModel, e);
      else if (e.streamId.startsWith('payout-')) await applyToStream(tx, payoutModel, e);
      else if (e.streamId.startsWith('wallet-')) await applyToWallet(tx, e);
    }
  },
};
