// Response transformers for pawaPay v2: its answers read into our terms (CONTRACT §15).
//
//   initiation  `{depositId|payoutId|refundId, status: ACCEPTED|REJECTED|DUPLICATE_IGNORED, created,
//               failureReason?: {failureCode, failureMessage}}` (REJECTED comes with HTTP 200 for
//               refusals such as INVALID_PHONE_NUMBER or AMOUNT_OUT_OF_BOUNDS, 400 for a malformed body)
//   check status `{status: FOUND|NOT_FOUND, data?: {…, status: ACCEPTED|PROCESSING|IN_RECONCILIATION|
//               COMPLETED|FAILED (payouts also ENQUEUED), failureReason?}}`
//   callback    the resource itself (the same `data` object), POSTed once it is final
import type { FailureReason, LegFailure, ProviderStatus } from '../types.ts';

const PROVIDER = 'pawapay';

/** pawaPay failure codes → what they mean for the merchant; any other code is `provider_error`. */
const REASON_OF: Readonly<Record<string, FailureReason>> = {
  PAYMENT_NOT_APPROVED: 'payer_declined',
  INSUFFICIENT_BALANCE: 'insufficient_funds',
  PAYER_NOT_FOUND: 'account_not_found',
  RECIPIENT_NOT_FOUND: 'account_not_found',
  INVALID_PHONE_NUMBER: 'account_not_found',
  WALLET_LIMIT_REACHED: 'limit_reached',
  PAYER_LIMIT_REACHED: 'limit_reached',
  AMOUNT_OUT_OF_BOUNDS: 'limit_reached',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** A `failureReason` object as pawaPay sends it, read as our failure (a missing code is `UNSPECIFIED_FAILURE`). */
export function failureOf(failureReason: unknown): LegFailure {
  const f = isObject(failureReason) ? failureReason : {};
  const code = text(f.failureCode) ?? 'UNSPECIFIED_FAILURE';
  return {
    failureReason: Object.hasOwn(REASON_OF, code) ? REASON_OF[code]! : 'provider_error',
    provider: PROVIDER,
    code,
    message: text(f.failureMessage) ?? 'pawaPay gave no failure message',
  };
}

/** A payment's status → ours: COMPLETED completed, FAILED and REJECTED failed, every other status pending. */
export function legStatus(data: Record<string, unknown>, legId: string): ProviderStatus {
  // The provider reference is our leg id: pawaPay knows the payment by it, on every call.
  const status = text(data.status);
  if (status === 'COMPLETED') return { state: 'completed', providerReference: legId };
  if (status === 'FAILED' || status === 'REJECTED') {
    const failure = failureOf(data.failureReason);
    return { state: 'failed', providerReference: legId, reason: failure.code, failure };
  }
  return { state: 'pending', providerReference: legId };
}

export type Initiation =
  | { status: 'ACCEPTED' | 'DUPLICATE_IGNORED'; failure?: undefined }
  | { status: 'REJECTED'; failure: LegFailure }
  | { status: undefined; failure?: LegFailure | undefined };

/** An initiation answer's body; `status` undefined when it carries none we know (an error body, or none). */
export function initiationOf(json: unknown): Initiation {
  const body = isObject(json) ? json : {};
  const status = text(body.status);
  if (status === 'ACCEPTED' || status === 'DUPLICATE_IGNORED') return { status };
  if (status === 'REJECTED') return { status, failure: failureOf(body.failureReason) };
  return { status: undefined, failure: isObject(body.failureReason) ? failureOf(body.failureReason) : undefined };
}

/**
 * A check-status answer: the leg's status, `undefined` for NOT_FOUND (pawaPay never saw the id),
 * or `'unreadable'` for an answer of another shape (the caller asks again later).
 */
export function statusAnswerOf(json: unknown, legId: string): ProviderStatus | undefined | 'unreadable' {
  if (!isObject(json)) return 'unreadable';
  if (json.status === 'NOT_FOUND') return undefined;
  if (json.status !== 'FOUND' || !isObject(json.data)) return 'unreadable';
  return legStatus(json.data, legId);
}

/**
 * The pawaPay id a callback is about: its refundId, payoutId or depositId, in that order (a refund's
 * callback may also name the deposit it refunds). Undefined when the body is not a JSON object
 * carrying one of them as a non-empty string.
 */
export function callbackLegId(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  return text(body.refundId) ?? text(body.payoutId) ?? text(body.depositId);
}
