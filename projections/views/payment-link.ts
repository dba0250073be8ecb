// The API JSON of a payment link (CONTRACT §16). Two steps, because two parts of it are not facts of
// the link's events: `expired` depends on the time of the read, and `url`/`qr_svg_url` on where the
// service is reached (PUBLIC_BASE_URL, else the request's own origin). So the read model stores the
// record (paymentLinkRecord, from the state alone), and every answer renders it at read time
// (renderPaymentLink): GET, lists, the create and deactivate answers and the dashboard alike.
import { invariant } from '../../domain/errors.ts';
import { statusOf, type PaymentLinkState } from '../../domain/payment-link.ts';

/** What the read model stores of a link: everything but the read-time parts. */
export interface PaymentLinkRecord {
  id: string;
  merchant_id: string;
  amount: string;
  currency: string;
  description: string;
  customer_id: string | null;
  expires_at: string | null;
  max_payments: number | null;
  metadata: Record<string, string>;
  /** Completed payins. */
  payments_count: number;
  /** Payins holding a place until their outcome. */
  pending_payments: number;
  deactivated_at: string | null;
  created_at: string;
  updated_at: string;
}

export function paymentLinkRecord(state: PaymentLinkState): PaymentLinkRecord {
  invariant(state.exists && state.created, 'rendering a payment link that does not exist');
  const c = state.created;
  return {
    id: c.payment_link_id, merchant_id: c.merchant_id, amount: c.amount, currency: c.currency, description: c.description,
    customer_id: c.customer_id, expires_at: c.expires_at, max_payments: c.max_payments, metadata: c.metadata,
    payments_count: state.completed, pending_payments: state.pending.length, deactivated_at: state.deactivated_at,
    created_at: c.at, updated_at: state.updated_at,
  };
}

/** The status a record has at `now` (the domain's rule). */
export const recordStatus = (r: PaymentLinkRecord, now: Date) => statusOf({
  deactivated: r.deactivated_at !== null, completed: r.payments_count, max_payments: r.max_payments, expires_at: r.expires_at,
}, now);

/** The payer's page of a link, absolute: under `base` (no trailing slash). */
export const paymentLinkUrl = (base: string, id: string) => `${base}/pay/${id}`;

/** The link as the API answers it at `now`, its URLs under `base` (see linkBaseUrl). */
export function renderPaymentLink(r: PaymentLinkRecord, now: Date, base: string): Record<string, unknown> {
  const url = paymentLinkUrl(base, r.id);
  return {
    id: r.id,
    url,
    qr_svg_url: `${url}/qr.svg`,
    status: recordStatus(r, now),
    amount: r.amount,
    currency: r.currency,
    description: r.description,
    payments_count: r.payments_count,
    expires_at: r.expires_at,
    max_payments: r.max_payments,
    customer_id: r.customer_id,
    metadata: r.metadata,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * Where the links' URLs point: PUBLIC_BASE_URL when configured (no trailing slash), else the origin
 * the request reached (its Host header; `fallback` when it has none).
 */
export function linkBaseUrl(publicBaseUrl: string | undefined, host: string | undefined, fallback: string): string {
  if (publicBaseUrl !== undefined) return publicBaseUrl.replace(/\/+$/, '');
  return host !== undefined && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `http://${host}` : fallback;
}
