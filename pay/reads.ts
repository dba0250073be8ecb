// What the payer's page reads: the link (its stream, so a link made a moment ago, or one deactivated a
// moment ago, shows as it is) with its merchant's name, and a payin only when it was made through that
// link. Anything else (no such id, an id that is not one, a payin of another link or merchant) reads
// as nothing, and the page answers the same 404 for all of them.
import type { Services } from '../commands/services.ts';
import { streams } from '../commands/streams.ts';
import { linkStatus, paymentLinkDecider, type PaymentLinkStatus } from '../domain/payment-link.ts';
import { payinDecider } from '../domain/payin.ts';
import type { PaymentStatus } from '../domain/payment.ts';
import type { FailureReason } from '../domain/failure-reasons.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What the page may show of a link (CONTRACT §16: the merchant's name, the description, the amount), and what it needs to take a payment. */
export interface PayableLink {
  id: string;
  merchantId: string;
  merchantName: string;
  amount: string;
  currency: string;
  description: string;
  /** The link pays as this customer: the page asks no name. */
  hasCustomer: boolean;
  status: PaymentLinkStatus;
}

export interface LinkPayin {
  id: string;
  status: PaymentStatus;
  amount: string;
  currency: string;
  phone: string;
  operatorCode: string;
  failureReason: FailureReason | null;
}

export async function readLink(s: Services, id: string): Promise<PayableLink | undefined> {
  if (!UUID.test(id)) return undefined;
  const { state } = await s.aggregates.load(streams.paymentLink(id), paymentLinkDecider);
  if (!state.exists || !state.created) return undefined;
  const c = state.created;
  const merchant = (await s.knex('merchants').where({ id: c.merchant_id }).first('name', 'status')) as { name: string; status: string } | undefined;
  // A merchant the operator set inactive collects through none of its links (domain/payment-link.ts requireMerchantCollecting).
  const status = merchant !== undefined && merchant.status !== 'active' ? 'inactive' : linkStatus(state, s.clock.now());
  return {
    id, merchantId: c.merchant_id, merchantName: merchant?.name ?? '', amount: c.amount, currency: c.currency,
    description: c.description, hasCustomer: c.customer_id !== null, status,
  };
}

/** The payin, read from its stream (the status page follows it from the moment it is made). */
export async function readPayinOfLink(s: Services, link: PayableLink, payinId: string): Promise<LinkPayin | undefined> {
  if (!UUID.test(payinId)) return undefined;
  const { state } = await s.aggregates.load(streams.payin(payinId), payinDecider);
  const c = state.created;
  if (!state.exists || !c || c.payment_link_id !== link.id || c.merchant_id !== link.merchantId) return undefined;
  return {
    id: payinId, status: state.status, amount: c.send_amount, currency: c.send_currency, phone: c.source.phone ?? '',
    operatorCode: c.operator_code, failureReason: state.failure_reason,
  };
}
