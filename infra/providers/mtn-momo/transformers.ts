// MTN MoMo answers read into our terms (CONTRACT §15): the status map, the failure map, and the
// reading of MTN's error bodies. MTN's `reason` arrives either as a bare code (what the sandbox and
// most live answers carry) or as `{code, message}` (the ErrorReason object of MTN's published
// schema), so every reader accepts both.
import type { FailureReason, LegFailure, ProviderStatus } from '../types.ts';

export const MTN_MOMO = 'mtn_momo';

// MTN's transaction statuses. CREATED is what the sandbox shows for its "delayed" numbers and
// ONGOING for a payer still inside the approval window: both are a leg MTN has and has not settled.
const STATUS_MAP: Record<string, ProviderStatus['state']> = {
  SUCCESSFUL: 'completed',
  FAILED: 'failed',
  PENDING: 'pending',
  CREATED: 'pending',
  ONGOING: 'pending',
};

const FAILURE_MAP: Record<string, FailureReason> = {
  APPROVAL_REJECTED: 'payer_declined',
  TRANSACTION_CANCELED: 'payer_declined',
  PAYMENT_NOT_APPROVED: 'payer_declined',
  EXPIRED: 'expired',
  COULD_NOT_PERFORM_TRANSACTION: 'expired',
  NOT_ENOUGH_FUNDS: 'insufficient_funds',
  PAYER_NOT_FOUND: 'account_not_found',
  PAYEE_NOT_FOUND: 'account_not_found',
  SENDER_ACCOUNT_NOT_ACTIVE: 'account_not_found',
  PAYER_LIMIT_REACHED: 'limit_reached',
  PAYEE_NOT_ALLOWED_TO_RECEIVE: 'limit_reached',
  NOT_ALLOWED: 'not_allowed',
  NOT_ALLOWED_TARGET_ENVIRONMENT: 'not_allowed',
  INVALID_CURRENCY: 'not_allowed',
};

// Bounds what we keep of a provider's text: it ends up in events and API answers.
const MAX_TEXT = 200;

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim().length > 0 ? v.trim().slice(0, MAX_TEXT) : undefined;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A failure in our words, keeping MTN's own code and message. */
export function failureOf(code: string, message?: string): LegFailure {
  return { failureReason: FAILURE_MAP[code] ?? 'provider_error', provider: MTN_MOMO, code, message: message ?? code };
}

/** MTN's `reason` (a code, or `{code, message}`), or undefined when it carries none. */
function reasonOf(reason: unknown): { code: string; message?: string | undefined } | undefined {
  const bare = text(reason);
  if (bare) return { code: bare };
  if (!isObject(reason)) return undefined;
  const code = text(reason.code);
  return code ? { code, message: text(reason.message) } : undefined;
}

/**
 * A status answer (`GET …/{referenceId}`, 200) as a ProviderStatus. Throws when the body is not a
 * status at all: the caller cannot tell what MTN has, which is in doubt, not a failure.
 */
export function statusFromMtn(legId: string, body: unknown): ProviderStatus {
  const status = isObject(body) ? text(body.status) : undefined;
  if (!status || !isObject(body)) throw new Error(`${MTN_MOMO} status answer without a status`);
  // An unknown status is read as pending: polling goes on and reconciliation lists the leg if it lasts.
  const state = STATUS_MAP[status.toUpperCase()] ?? 'pending';
  if (state !== 'failed') return { state, providerReference: legId };
  // MTN documents `reason` as the cause of a failure; a failure without one is still a failure.
  const reason = reasonOf(body.reason) ?? { code: 'FAILED' };
  return { state: 'failed', providerReference: legId, reason: reason.code, failure: failureOf(reason.code, reason.message) };
}

/** MTN's error body `{code, message}` (APIM's gateway answers `{statusCode, message}` instead). */
export function errorBody(body: unknown): { code?: string | undefined; message?: string | undefined } {
  if (!isObject(body)) return {};
  return { code: text(body.code) ?? text(body.error), message: text(body.message) };
}

/** A refused initiation (a 4xx answer) as a failure: MTN's code, or the HTTP status when it gave none. */
export function refusalOf(httpStatus: number, body: unknown): LegFailure {
  const { code, message } = errorBody(body);
  return failureOf(code ?? `HTTP_${httpStatus}`, message);
}

/** The account-holder check's answer: false only when MTN says, in so many words, that it is not active. */
export function accountInactive(body: unknown): boolean {
  return isObject(body) && (body.result === false || body.result === 'false');
}
