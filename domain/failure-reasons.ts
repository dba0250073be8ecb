// Why a provider leg failed, in words a merchant can act on (CONTRACT §15), beside the provider's
// own account of it. A failed payin, payout, refund or transfer leg answers `failure_reason` (one
// of FAILURE_REASONS) and `provider_failure` ({provider, code, message}, or null when the provider
// is not known). The adapters state both (infra/providers: ProviderStatus.failure, translated by
// commands/leg-outcomes.ts); what is known only by the provider's code (the events recorded before
// failures were, an outcome without the provider's account) is read here, by `failureOfCode`.

/** The reasons of CONTRACT §15, in its order (the same list as infra/providers/types.ts). */
export const FAILURE_REASONS = [
  'payer_declined', 'expired', 'insufficient_funds', 'account_not_found', 'limit_reached', 'not_allowed', 'provider_error',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** The provider's own account of a failure: which provider, its code, its message. */
export interface ProviderFailure {
  provider: string;
  code: string;
  message: string;
}

/** What a failed leg records and answers. */
export interface Failure {
  failure_reason: FailureReason;
  provider_failure: ProviderFailure | null;
}

const SANDBOX_PROVIDER = 'sandbox';

/**
 * The sandbox's codes (infra/providers/sandbox.ts, CONTRACT §3 and §9), each with what it means and
 * the sandbox's message. REFUND_REJECTED says nothing a merchant can act on: provider_error.
 */
const SANDBOX_CODES: Readonly<Record<string, { reason: FailureReason; message: string }>> = {
  INSUFFICIENT_FUNDS: { reason: 'insufficient_funds', message: "The payer's balance is too low for this amount" },
  PAYER_NOT_FOUND: { reason: 'account_not_found', message: "No mobile-money account for the payer's phone" },
  RECIPIENT_NOT_FOUND: { reason: 'account_not_found', message: "No mobile-money account for the recipient's phone" },
  INVALID_OTP: { reason: 'payer_declined', message: 'The one-time password was not accepted' },
  OTP_REQUIRED: { reason: 'not_allowed', message: 'This operator collects only with a one-time password' },
  REFUND_REJECTED: { reason: 'provider_error', message: 'The operator refused the refund' },
  FAILED: { reason: 'provider_error', message: 'The leg failed without a reason' },
};

/**
 * MTN MoMo's and pawaPay's codes, CONTRACT §15's table (their adapters map them the same way: a
 * unit test holds them together). No code means one thing at one and another at the other.
 */
const PROVIDER_CODES: Readonly<Record<Exclude<FailureReason, 'provider_error'>, readonly string[]>> = {
  payer_declined: ['APPROVAL_REJECTED', 'TRANSACTION_CANCELED', 'PAYMENT_NOT_APPROVED'],
  expired: ['EXPIRED', 'COULD_NOT_PERFORM_TRANSACTION'],
  insufficient_funds: ['NOT_ENOUGH_FUNDS', 'INSUFFICIENT_BALANCE'],
  account_not_found: ['PAYER_NOT_FOUND', 'PAYEE_NOT_FOUND', 'SENDER_ACCOUNT_NOT_ACTIVE', 'RECIPIENT_NOT_FOUND', 'INVALID_PHONE_NUMBER'],
  limit_reached: ['PAYER_LIMIT_REACHED', 'PAYEE_NOT_ALLOWED_TO_RECEIVE', 'WALLET_LIMIT_REACHED', 'AMOUNT_OUT_OF_BOUNDS'],
  not_allowed: ['NOT_ALLOWED', 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'INVALID_CURRENCY'],
};

const REASON_OF_CODE: ReadonlyMap<string, FailureReason> = new Map([
  ...Object.entries(PROVIDER_CODES).flatMap(([reason, codes]) => codes.map((code) => [code, reason as FailureReason] as const)),
  ...Object.entries(SANDBOX_CODES).map(([code, known]) => [code, known.reason] as const),
]);

export const isFailureReason = (v: unknown): v is FailureReason => (FAILURE_REASONS as readonly unknown[]).includes(v);

/** A provider's code (the sandbox's, MTN's or pawaPay's) in the merchant's words; any other code is `provider_error`. */
export function failureReasonOf(code: string): FailureReason {
  return REASON_OF_CODE.get(code) ?? 'provider_error';
}

/** A sandbox leg's failure: its code's reason, and the sandbox's own account with its message. */
export function sandboxFailure(code: string): Failure & { provider_failure: ProviderFailure } {
  const message = Object.hasOwn(SANDBOX_CODES, code) ? SANDBOX_CODES[code]!.message : `The sandbox failed the leg (${code})`;
  return { failure_reason: failureReasonOf(code), provider_failure: { provider: SANDBOX_PROVIDER, code, message } };
}

/**
 * A failure known only by the provider's code: an event recorded before failures were, or an outcome
 * that came without the provider's account. The sandbox is named only for one of its own codes: until
 * failures were recorded every leg went to the sandbox, and a real adapter always gives its account.
 * Any other code (the domain's own COLLECTION_FAILED, DISBURSEMENT_FAILED…) has no provider_failure.
 */
export function failureOfCode(code: string): Failure {
  if (Object.hasOwn(SANDBOX_CODES, code)) return sandboxFailure(code);
  return { failure_reason: failureReasonOf(code), provider_failure: null };
}

/**
 * The failure a failed event records: its own fields when it has them, else read from its raw
 * `reason` (an event recorded before them still folds).
 */
export function recordedFailure(data: { reason: string; failure_reason?: FailureReason; provider_failure?: ProviderFailure | null }): Failure {
  if (data.failure_reason === undefined) return failureOfCode(data.reason);
  return { failure_reason: data.failure_reason, provider_failure: data.provider_failure ?? null };
}
