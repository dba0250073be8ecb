// Failure reasons a merchant can act on (CONTRACT §15, issue 41 point 5): the provider's codes read
// in the merchant's words (the sandbox's, MTN MoMo's and pawaPay's), what a failure known only by its
// code answers, the adapters' own maps agreeing with the domain's, and an adapter's status turned
// into the domain's outcome (commands/leg-outcomes.ts legOutcomeOf).
import t from 'tap';
import {
  FAILURE_REASONS, failureOfCode, failureReasonOf, isFailureReason, recordedFailure, sandboxFailure, type FailureReason,
} from '../domain/failure-reasons.ts';
import { failureOf as mtnFailureOf } from '../infra/providers/mtn-momo/transformers.ts';
import { failureOf as pawapayFailureOf } from '../infra/providers/pawapay/transformers.ts';
import { legOutcomeOf } from '../commands/leg-outcomes.ts';

// CONTRACT §15's table, copied from the contract (not from the code under test).
const MTN: Record<Exclude<FailureReason, 'provider_error'>, string[]> = {
  payer_declined: ['APPROVAL_REJECTED', 'TRANSACTION_CANCELED', 'PAYMENT_NOT_APPROVED'],
  expired: ['EXPIRED', 'COULD_NOT_PERFORM_TRANSACTION'],
  insufficient_funds: ['NOT_ENOUGH_FUNDS'],
  account_not_found: ['PAYER_NOT_FOUND', 'PAYEE_NOT_FOUND', 'SENDER_ACCOUNT_NOT_ACTIVE'],
  limit_reached: ['PAYER_LIMIT_REACHED', 'PAYEE_NOT_ALLOWED_TO_RECEIVE'],
  not_allowed: ['NOT_ALLOWED', 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'INVALID_CURRENCY'],
};
const PAWAPAY: Record<Exclude<FailureReason, 'provider_error'>, string[]> = {
  payer_declined: ['PAYMENT_NOT_APPROVED'],
  expired: [],
  insufficient_funds: ['INSUFFICIENT_BALANCE'],
  account_not_found: ['PAYER_NOT_FOUND', 'RECIPIENT_NOT_FOUND', 'INVALID_PHONE_NUMBER'],
  limit_reached: ['WALLET_LIMIT_REACHED', 'PAYER_LIMIT_REACHED', 'AMOUNT_OUT_OF_BOUNDS'],
  not_allowed: [],
};
// The sandbox's codes (infra/providers/sandbox.ts), as the brief of issue 41 point 5 maps them.
const SANDBOX: Record<string, FailureReason> = {
  INSUFFICIENT_FUNDS: 'insufficient_funds',
  PAYER_NOT_FOUND: 'account_not_found',
  RECIPIENT_NOT_FOUND: 'account_not_found',
  INVALID_OTP: 'payer_declined',
  OTP_REQUIRED: 'not_allowed',
  REFUND_REJECTED: 'provider_error',
  FAILED: 'provider_error',
};
const rows = (table: Record<string, string[]>) => Object.entries(table).flatMap(([reason, codes]) => codes.map((code) => [code, reason] as const));

t.test("the list is CONTRACT §15's, the same as the adapters'", async (t) => {
  t.same([...FAILURE_REASONS], ['payer_declined', 'expired', 'insufficient_funds', 'account_not_found', 'limit_reached', 'not_allowed', 'provider_error']);
  t.ok(isFailureReason('expired'));
  t.notOk(isFailureReason('EXPIRED'), 'a provider code is not a reason');
});

t.test("the sandbox's codes", async (t) => {
  for (const [code, reason] of Object.entries(SANDBOX)) {
    t.equal(failureReasonOf(code), reason, `${code} → ${reason}`);
    const f = sandboxFailure(code);
    t.equal(f.failure_reason, reason);
    t.match(f.provider_failure, { provider: 'sandbox', code, message: /^[A-Z].{10,}$/ }, `${code}: the sandbox named, with a message`);
    t.same(failureOfCode(code), f, `${code} alone: the sandbox's failure (every leg before failures were recorded went to the sandbox)`);
  }
  t.match(sandboxFailure('SOMETHING_NEW'), { failure_reason: 'provider_error', provider_failure: { provider: 'sandbox', code: 'SOMETHING_NEW' } });
});

t.test("MTN MoMo's and pawaPay's codes, per CONTRACT §15's table; anything else provider_error", async (t) => {
  for (const [code, reason] of rows(MTN)) {
    t.equal(failureReasonOf(code), reason, `MTN ${code} → ${reason}`);
    t.equal(mtnFailureOf(code).failureReason, reason, `the MTN adapter maps ${code} the same way`);
  }
  for (const [code, reason] of rows(PAWAPAY)) {
    t.equal(failureReasonOf(code), reason, `pawaPay ${code} → ${reason}`);
    t.equal(pawapayFailureOf({ failureCode: code, failureMessage: 'm' }).failureReason, reason, `the pawaPay adapter maps ${code} the same way`);
  }
  for (const code of ['INTERNAL_PROCESSING_ERROR', 'SERVICE_UNAVAILABLE', 'UNSPECIFIED_FAILURE', 'COLLECTION_FAILED', 'DISBURSEMENT_FAILED', '', 'insufficient_funds']) {
    t.equal(failureReasonOf(code), 'provider_error', `${JSON.stringify(code)} → provider_error`);
  }
  t.same(failureOfCode('NOT_ENOUGH_FUNDS'), { failure_reason: 'insufficient_funds', provider_failure: null },
    'a code the sandbox never gives, alone: its reason, no provider named');
  t.same(failureOfCode('DISBURSEMENT_FAILED'), { failure_reason: 'provider_error', provider_failure: null });
});

t.test('a failed event: its own failure, else read from its code', async (t) => {
  const told = { provider: 'mtn_momo', code: 'APPROVAL_REJECTED', message: 'rejected' };
  t.same(recordedFailure({ reason: 'APPROVAL_REJECTED', failure_reason: 'payer_declined', provider_failure: told }), { failure_reason: 'payer_declined', provider_failure: told });
  t.same(recordedFailure({ reason: 'X', failure_reason: 'expired', provider_failure: null }), { failure_reason: 'expired', provider_failure: null },
    'as recorded, even where the code would say otherwise');
  t.same(recordedFailure({ reason: 'INVALID_OTP' }), sandboxFailure('INVALID_OTP'), 'recorded before: from the code');
});

t.test("legOutcomeOf: the adapter's failure in the domain's terms", async (t) => {
  t.same(legOutcomeOf({ state: 'pending', providerReference: 'r' }), undefined);
  t.same(legOutcomeOf({ state: 'completed', providerReference: 'r' }), { outcome: 'completed', providerReference: 'r' });
  const mtn = mtnFailureOf('NOT_ENOUGH_FUNDS', 'Not enough funds');
  t.same(legOutcomeOf({ state: 'failed', providerReference: 'r', reason: 'NOT_ENOUGH_FUNDS', failure: mtn }), {
    outcome: 'failed', providerReference: 'r', reason: 'NOT_ENOUGH_FUNDS',
    failure: { failure_reason: 'insufficient_funds', provider_failure: { provider: 'mtn_momo', code: 'NOT_ENOUGH_FUNDS', message: 'Not enough funds' } },
  });
  t.same(legOutcomeOf({ state: 'failed', providerReference: 'r', reason: 'RECIPIENT_NOT_FOUND' }), {
    outcome: 'failed', providerReference: 'r', reason: 'RECIPIENT_NOT_FOUND', failure: sandboxFailure('RECIPIENT_NOT_FOUND'),
  }, 'a status without its failure (a sandbox callback): read from the code');
});
