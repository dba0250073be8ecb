// Every aggregate whose legs go through the provider gateway, and how each one's legs start and
// settle (see commands/legs.ts). Transfers add their owner to `legOwners`.
import * as In from '../domain/payin.ts';
import * as Out from '../domain/payout.ts';
import { recordPayinSubmission, settlePayin } from './payins.ts';
import { recordPayoutSubmission, settlePayout } from './payouts.ts';
import { streams } from './streams.ts';
import type { LegOwner } from './legs.ts';
import { transferLegOwner } from './transfer-legs.ts';
import { refundLegOwner } from './refunds.ts';

/** A payin's collection: reference = payin id; the payer is collected send_amount. */
export const payinLegOwner: LegOwner = {
  name: 'payin',
  triggers: {
    'payin.created': (e) => {
      const d = e.data as unknown as In.PayinCreated;
      return {
        owner: 'payin', reference: d.payin_id, kind: 'collection', operatorCode: d.operator_code, phone: d.source.phone!,
        amount: BigInt(d.send_amount), currency: d.send_currency, otp: d.otp_supplied, paymentId: d.payin_id,
      };
    },
  },
  async isOpen(s, reference) {
    return s.aggregates.yesFromCache(streams.payin(reference), In.payinDecider, (st) => st.exists && st.status === 'pending'); // see legs.ts isOpen
  },
  submitted: (s, reference, providerReference, meta) => recordPayinSubmission(s, reference, providerReference, meta),
  settled: (s, reference, outcome, meta) => settlePayin(s, reference, outcome, meta),
};

/** A payout's disbursement: reference = payout id; the recipient is paid receive_amount. */
export const payoutLegOwner: LegOwner = {
  name: 'payout',
  triggers: {
    'payout.created': (e) => {
      const d = e.data as unknown as Out.PayoutCreated;
      return {
        owner: 'payout', reference: d.payout_id, kind: 'disbursement', operatorCode: d.operator_code, phone: d.recipient.phone!,
        amount: BigInt(d.receive_amount), currency: d.receive_currency, otp: false, paymentId: d.payout_id,
      };
    },
  },
  async isOpen(s, reference) {
    return s.aggregates.yesFromCache(streams.payout(reference), Out.payoutDecider, (st) => st.exists && st.status === 'pending'); // see legs.ts isOpen
  },
  submitted: (s, reference, providerReference, meta) => recordPayoutSubmission(s, reference, providerReference, meta),
  settled: (s, reference, outcome, meta) => settlePayout(s, reference, outcome, meta),
};

export const legOwners: LegOwner[] = [
  payinLegOwner,
  payoutLegOwner,
  transferLegOwner,
  refundLegOwner,
];
