// Business refusals carry the contract's error code from where they arise; the API maps codes to
// HTTP statuses in one place (api/errors.ts).
export type ErrorCode =
  | 'bad_request'
  | 'unsupported_route'
  | 'amount_out_of_range'
  | 'idempotency_key_required'
  | 'idempotency_conflict'
  | 'idempotency_in_progress'
  | 'unauthorized'
  /** The API key lacks the scope the operation needs (CONTRACT §18: 403, the scope named). */
  | 'forbidden'
  | 'not_found'
  | 'quote_expired'
  | 'quote_not_active'
  | 'quote_mismatch'
  | 'insufficient_balance'
  | 'corridor_not_configured'
  | 'operator_not_enabled'
  | 'otp_required'
  /** The operator is closed for the flow (CONTRACT §14). */
  | 'operator_unavailable'
  /** A routing names a provider that is not configured or does not serve the operator (CONTRACT §15). */
  | 'provider_unavailable'
  | 'relaunch_not_allowed'
  | 'customer_not_found'
  | 'quote_not_found'
  | 'kyc_required'
  | 'kyc_review_pending'
  | 'kyc_already_verified'
  /** Refunds (CONTRACT §9). */
  | 'refund_not_allowed'
  | 'payin_not_found'
  | 'refund_exceeds_payin'
  /** A payment link no longer takes payments: inactive, completed or expired (CONTRACT §16: 410). */
  | 'payment_link_closed'
  /** Every place left on a payment link is held by a pending payin: retry once one fails (409). */
  | 'payment_link_busy'
  /** A per-merchant bound is reached (CONTRACT §17: at most 16 webhook endpoints). */
  | 'limit_exceeded'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  /** A database or bus is briefly unreachable (503 with Retry-After): retry the same request. */
  | 'service_unavailable';

export interface ErrorDetail {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const refuse = (code: ErrorCode, message: string, details?: ErrorDetail[]): never => {
  throw new DomainError(code, message, details);
};

/** A broken invariant: the process must stop rather than carry on with corrupt money. */
export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
}

export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}
