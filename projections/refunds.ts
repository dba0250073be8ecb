// Read model of refunds (CONTRACT §9): filter columns and the rendered API JSON (shared with
// webhook snapshots). The payin's own row shows its refunds' claims (views/payin.ts).
import { refundDecider, type RefundEvent, type RefundState } from '../domain/refund.ts';
import { renderRefund } from './views/refund.ts';
import { prepareStreams, type StreamModel } from './money.ts';
import type { Projection } from './projection.ts';

const refundModel: StreamModel<RefundState, RefundEvent> = {
  prefix: 'refund-',
  table: 'refunds',
  decider: refundDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, payin_id: s.created!.payin_id, status: s.status,
    created_at: s.created!.at, updated_at: s.updated_at, body: renderRefund(s),
  }),
};

export const refundsProjection: Projection = {
  name: 'refunds',
  tables: ['refunds'],
  async apply(tx, events, ctx) {
    await (await prepareStreams(tx, refundModel, events, ctx))(tx);
  },
  prepare: (db, events, ctx) => prepareStreams(db, refundModel, events, ctx),
};
