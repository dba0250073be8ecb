// One mapping from the contract's error codes to HTTP, and the error body every error uses.
import type { Response } from 'express';
import type { ErrorCode, ErrorDetail } from '../domain/errors.ts';

export const STATUS_OF: Record<ErrorCode, number> = {
  bad_request: 400,
  unsupported_route: 400,
  amount_out_of_range: 400,
  idempotency_key_required: 400,
  idempotency_conflict: 409,
  idempotency_in_progress: 409,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  quote_expired: 400,
  quote_not_active: 400,
  quote_mismatch: 400,
  insufficient_balance: 400,
  corridor_not_configured: 400,
  operator_not_enabled: 400,
  otp_required: 400,
  operator_unavailable: 400,
  provider_unavailable: 400,
  relaunch_not_allowed: 400,
  customer_not_found: 400,
  quote_not_found: 400,
  kyc_required: 400,
  kyc_review_pending: 409,
  kyc_already_verified: 409,
  refund_not_allowed: 400,
  payin_not_found: 400,
  refund_exceeds_payin: 400,
  payment_link_closed: 410,
  payment_link_busy: 409,
  limit_exceeded: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[]; request_id?: string };
}

export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[], requestId?: string): ErrorBody {
  const error: ErrorBody['error'] = { code, message };
  if (details && details.length > 0) error.details = details;
  if (requestId) error.request_id = requestId;
  return { error };
}

/** Answers the error body, with the request's id (X-Request-Id, set first thing on every request). */
export function sendError(res: Response, code: ErrorCode, message: string, details?: ErrorDetail[]): void {
  const requestId = String(res.getHeader('X-Request-Id') ?? '');
  res.status(STATUS_OF[code]).json(errorBody(code, message, details, requestId));
}
