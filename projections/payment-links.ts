// Read model of payment links (CONTRACT §16): the filter columns and the stored record; an answer
// renders the record at read time (views/payment-link.ts: `expired` and the URLs are not facts of
// the events). `status` here is what the events make it: active, inactive or completed.
import { paymentLinkDecider, statusFacts, statusOf, type PaymentLinkEvent, type PaymentLinkState } from '../domain/payment-link.ts';
import { paymentLinkRecord } from './views/payment-link.ts';
import { prepareStreams, type StreamModel } from './money.ts';
import type { Projection } from './projection.ts';

const paymentLinkModel: StreamModel<PaymentLinkState, PaymentLinkEvent> = {
  prefix: 'payment-link-',
  table: 'payment_links',
  decider: paymentLinkDecider,
  columns: (s) => ({
    merchant_id: s.created!.merchant_id, customer_id: s.created!.customer_id, status: statusOf(statusFacts(s)),
    expires_at: s.created!.expires_at, created_at: s.created!.at, updated_at: s.updated_at, body: paymentLinkRecord(s),
  }),
};

export const paymentLinksProjection: Projection = {
  name: 'payment_links',
  tables: ['payment_links'],
  async apply(tx, events, ctx) {
    await (await prepareStreams(tx, paymentLinkModel, events, ctx))(tx);
  },
  prepare: (db, events, ctx) => prepareStreams(db, paymentLinkModel, events, ctx),
};
