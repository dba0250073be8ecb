// Read model of transfers: filter columns and the rendered API JSON (shared with webhook snapshots).
import { transferDecider, type TransferEvent, type TransferState } from '../domain/transfer.ts';
import { renderTransfer } from './views/transfer.ts';
import { prepareStreams, type StreamModel } from './money.ts';
import type { Projection } from './projection.ts';

const transferModel: StreamModel<TransferState, TransferEvent> = {
  prefix: 'transfer-',
  table: 'transfers',
  decider: transferDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, customer_id: s.created!.customer_id, quote_id: s.created!.quote_id,
    status: s.status, payin_status: s.payin_status, payout_status: s.payout_status,
    created_at: s.created!.at, updated_at: s.updated_at, body: renderTransfer(s),
  }),
};

export const transfersProjection: Projection = {
  name: 'transfers',
  tables: ['transfers'],
  async apply(tx, events, ctx) {
    await (await prepareStreams(tx, transferModel, events, ctx))(tx);
  },
  prepare: (db, events, ctx) => prepareStreams(db, transferModel, events, ctx),
};
