// Request builders for pawaPay's Merchant API v2 (docs.pawapay.io/v2/api-reference). One leg kind,
// one resource: a collection is a deposit, a disbursement a payout, a refund a refund of the deposit
// that collected the money. Each is created with our leg id as its idempotency key (depositId,
// payoutId, refundId: a UUID v4) and read back at `GET /v2/<resource>/<id>`.
//
// What is sent, and why (CONTRACT §15):
//   - `amount` as a string of whole francs (pawaPay takes amounts as strings; XAF and XOF have no
//     decimals), `currency` as ours;
//   - the MSISDN as E.164 digits without `+` (pawaPay's phone number format);
//   - `clientReferenceId` = the payment's id, so pawaPay's dashboard and statements point back to it;
//   - `preAuthorisationCode` only when the payer gave an OTP (providers that authorise by OTP);
//   - never `metadata` nor `customerMessage`: nothing about the payer beyond what moves the money;
//   - a refund always carries `amount` and `currency`: without them pawaPay refunds the whole deposit.
import { pawapayProvider } from './operators.ts';
import { LegNotTaken, type InitiateLeg, type LegKind } from '../types.ts';
import { uuidV4For } from '../leg-id.ts';

export interface PawapayRequest {
  /** Path under the API's base URL. */
  path: string;
  body: Record<string, unknown>;
}

const RESOURCE: Record<LegKind, { path: string; idField: 'depositId' | 'payoutId' | 'refundId' }> = {
  collection: { path: '/v2/deposits', idField: 'depositId' },
  disbursement: { path: '/v2/payouts', idField: 'payoutId' },
  refund: { path: '/v2/refunds', idField: 'refundId' },
};

/** Where pawaPay publishes the public keys that sign its callbacks. */
export const PUBLIC_KEYS_PATH = '/v2/public-key/http';

/** The check-status endpoint of a leg of this kind. */
export function statusPath(kind: LegKind, legId: string): string {
  return `${RESOURCE[kind].path}/${encodeURIComponent(legId)}`;
}

/** E.164 (`+237…`) → pawaPay's MSISDN (`237…`). Anything else goes as is: pawaPay refuses it (INVALID_PHONE_NUMBER). */
function msisdn(phone: string): string {
  return phone.startsWith('+') ? phone.slice(1) : phone;
}

/**
 * The initiation request for a leg. Throws LegNotTaken (nothing sent) for a leg pawaPay cannot carry:
 * an operator it does not serve, or a refund that does not name the collection it gives back.
 */
export function initiationRequest(leg: InitiateLeg, legId: string): PawapayRequest {
  const { path, idField } = RESOURCE[leg.kind];
  const money = { amount: leg.amount.toString(), currency: leg.currency };
  const reference = leg.paymentId ? { clientReferenceId: leg.paymentId } : {};
  if (leg.kind === 'refund') {
    if (!leg.refundOf) throw new LegNotTaken('pawapay refund without the collection it refunds');
    return { path, body: { [idField]: legId, depositId: uuidV4For(leg.refundOf), ...money, ...reference } };
  }
  const provider = pawapayProvider(leg.operatorCode);
  if (!provider) throw new LegNotTaken(`pawapay does not serve ${leg.operatorCode}`);
  const party = { type: 'MMO', accountDetails: { phoneNumber: msisdn(leg.phone), provider } };
  const body: Record<string, unknown> = leg.kind === 'collection'
    ? { [idField]: legId, ...money, payer: party, ...reference, ...(leg.otp ? { preAuthorisationCode: leg.otp } : {}) }
    : { [idField]: legId, ...money, recipient: party, ...reference };
  return { path, body };
}
