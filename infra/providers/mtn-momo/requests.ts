// MTN MoMo requests built from a leg (CONTRACT §15): which product and path each leg kind uses,
// the headers every call carries, and the bodies of request-to-pay, transfer and refund.
import { LegNotTaken, type InitiateLeg, type LegKind } from '../types.ts';

/** MTN products: each has its own subscription key, API user and token. Refunds are a Disbursements call. */
export type Product = 'collection' | 'disbursement';

export const productOf = (kind: LegKind): Product => (kind === 'collection' ? 'collection' : 'disbursement');

// The v1_0 paths: a v1 refund is read back at the same `/refund/{id}` as a v2 one, and v1 is what
// MTN's own SDK documents beside its status call.
const RESOURCE: Record<LegKind, string> = {
  collection: '/collection/v1_0/requesttopay',
  disbursement: '/disbursement/v1_0/transfer',
  refund: '/disbursement/v1_0/refund',
};

export const initiatePath = (kind: LegKind): string => RESOURCE[kind];
export const statusPath = (kind: LegKind, legId: string): string => `${RESOURCE[kind]}/${encodeURIComponent(legId)}`;
export const tokenPath = (product: Product): string => `/${product}/token/`;
/** MTN wants the id type in lower case. */
export const accountHolderPath = (msisdn: string): string => `/disbursement/v1_0/accountholder/msisdn/${msisdn}/active`;

/** `{publicBaseUrl}/providers/mtn_momo/callbacks/{X-Reference-Id}`; none without a public base URL. */
export function callbackUrl(publicBaseUrl: string | undefined, legId: string): string | undefined {
  if (!publicBaseUrl) return undefined;
  return `${publicBaseUrl.replace(/\/+$/, '')}/providers/mtn_momo/callbacks/${legId}`;
}

/**
 * E.164 digits without the `+`, as MTN's examples write MSISDNs. A phone that is not E.164 never
 * reaches MTN: it is certainly not taken.
 */
export function msisdn(phone: string): string {
  const digits = phone.startsWith('+') ? phone.slice(1) : phone;
  if (!/^[1-9]\d{5,14}$/.test(digits)) throw new LegNotTaken('mtn_momo: the phone is not an E.164 number');
  return digits;
}

/** Whole francs as an integer string (MTN's amount is a string in major units). */
function amountText(amount: bigint): string {
  if (amount <= 0n) throw new LegNotTaken('mtn_momo: the amount must be positive');
  return amount.toString();
}

// Short fixed notes: MTN refuses notes over 160 characters and some special characters, and
// shows these to the payer and the payee.
const NOTES: Record<LegKind, { payerMessage: string; payeeNote: string }> = {
  collection: { payerMessage: 'Payment', payeeNote: 'Payment' },
  disbursement: { payerMessage: 'Payout', payeeNote: 'Payout' },
  refund: { payerMessage: 'Refund', payeeNote: 'Refund' },
};

/**
 * The body of a leg's initiation. `externalId` is the X-Reference-Id too: MTN's callbacks and
 * reports carry `externalId`, not the reference id, and a UUID passes MTN's character checks.
 */
export function initiateBody(leg: InitiateLeg, legId: string, referenceIdToRefund: string | undefined, currency: string): Record<string, unknown> {
  const common = { amount: amountText(leg.amount), currency, externalId: legId, ...NOTES[leg.kind] };
  switch (leg.kind) {
    case 'collection':
      return { ...common, payer: { partyIdType: 'MSISDN', partyId: msisdn(leg.phone) } };
    case 'disbursement':
      return { ...common, payee: { partyIdType: 'MSISDN', partyId: msisdn(leg.phone) } };
    case 'refund':
      if (!referenceIdToRefund) throw new LegNotTaken('mtn_momo: a refund leg without the collection it refunds');
      return { ...common, referenceIdToRefund };
    default: {
      const never: never = leg.kind;
      throw new Error(`unknown leg kind ${String(never)}`);
    }
  }
}

/** The headers of every product call (not the token call): bearer token, subscription key, target. */
export function apiHeaders(a: { token: string; subscriptionKey: string; targetEnvironment: string; referenceId?: string; callbackUrl?: string | undefined; json?: boolean }): Record<string, string> {
  const h: Record<string, string> = {
    authorization: `Bearer ${a.token}`,
    'ocp-apim-subscription-key': a.subscriptionKey,
    'x-target-environment': a.targetEnvironment,
  };
  if (a.referenceId) h['x-reference-id'] = a.referenceId;
  if (a.callbackUrl) h['x-callback-url'] = a.callbackUrl;
  if (a.json) h['content-type'] = 'application/json';
  return h;
}
