// The two-leg transfer: collect from the payer, then disburse to the recipient (CONTRACT.md §4, §5).
// Pure: time, ids, provider outcomes, the quote and the customer's KYC status arrive in the commands.
// Wallet effects are decided by the wallet aggregate (domain/transfer-wallets.ts says which); the
// command layer appends both atomically.
import { DomainError, refuse, invariant } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { operator } from './catalogue.ts';
import { passKycGate, type KycGate } from './kyc.ts';
import { requireAvailable, type OperatorAvailabilities } from './operator-availability.ts';
import { checkAmountRange, parseAmount } from './money.ts';
import { checkParty, type RailParty, type Recipient } from './payment.ts';
import type { QuoteState } from './quote.ts';
import type { QuoteCreated } from './quote-pricing.ts';
import { failureOfCode, recordedFailure, type Failure, type FailureReason, type ProviderFailure } from './failure-reasons.ts';

export type TransferStatus = 'pending' | 'collecting' | 'disbursing' | 'completed' | 'failed';
export type LegStatus = 'not_started' | 'pending' | 'completed' | 'failed';

export type { RailParty, Recipient };

export interface HistoryEntry {
  status: TransferStatus;
  reason: string | null;
  created_at: string;
}

export interface PayoutAttempt {
  attempt: number;
  /** The provider reference we use for this disbursement (idempotency key at the provider). */
  leg_reference: string;
  amount: string;
  recipient: Recipient;
  status: 'pending' | 'completed' | 'failed';
  provider_reference: string | null;
  /** Why it failed (CONTRACT §15) and the provider's own account; null unless failed. */
  failure_reason: FailureReason | null;
  provider_failure: ProviderFailure | null;
  started_at: string;
  completed_at: string | null;
  failed_at: string | null;
  /** The relaunch request that started this attempt (its idempotency claim's id); null for attempt 1. */
  relaunch_id: string | null;
}

export interface TransferCreated {
  transfer_id: string;
  merchant_id: string;
  customer_id: string;
  quote_id: string;
  payin_amount: string;
  payin_currency: string;
  payout_amount: string;
  payout_currency: string;
  total_fee: string;
  corridor_code: string;
  corridor_type: string;
  payer_operator_code: string;
  recipient_operator_code: string;
  payer: RailParty;
  recipient: Recipient;
  pricing: Record<string, unknown>;
  /** The quote's statement of this transfer's effects on the wallets. */
  wallet_impact: unknown;
  payment_reason_code: string | null;
  sender_source_of_funds: string | null;
  sender_occupation: string | null;
  metadata: Record<string, string>;
  /** Whether the payer's operator requires an OTP to collect. */
  otp_required: boolean;
  /**
   * Whether the merchant sent one (sealed by the command layer, never in an event): it goes to the
   * provider whenever sent, as a payin's does (issue 28). Absent on transfers created before it was
   * recorded, when only a required OTP was sealed.
   */
  otp_supplied?: boolean;
  at: string;
}

/**
 * What a failed leg's events record beside the provider's code (`reason`): the failure in the
 * merchant's words and the provider's account (CONTRACT §15). Absent from the events recorded before
 * them, which evolve reads from `reason` (failure-reasons.ts).
 */
interface FailureFields {
  failure_reason?: FailureReason;
  provider_failure?: ProviderFailure | null;
}

export type TransferEvent =
  | DomainEvent<'transfer.created', TransferCreated>
  | DomainEvent<'transfer.collection_started', { leg_reference: string; operator_code: string; phone: string; amount: string; currency: string; otp: boolean; at: string }>
  | DomainEvent<'transfer.collection_submitted', { provider_reference: string; at: string }>
  | DomainEvent<'transfer.payin.completed', { provider_reference: string | null; at: string }>
  | DomainEvent<'transfer.payin.failed', { reason: string; at: string } & FailureFields>
  | DomainEvent<'transfer.payout.started', { attempt: number; leg_reference: string; amount: string; currency: string; recipient: Recipient; at: string; relaunch_id?: string }>
  | DomainEvent<'transfer.payout.submitted', { attempt: number; provider_reference: string; at: string }>
  | DomainEvent<'transfer.payout.completed', { attempt: number; provider_reference: string | null; at: string }>
  | DomainEvent<'transfer.payout.failed', { attempt: number; reason: string; at: string } & FailureFields>
  | DomainEvent<'transfer.completed', { at: string }>
  | DomainEvent<'transfer.failed', { reason: string; at: string } & FailureFields>;

/**
 * The KYC gate's facts (routing `kyc_required_operators`): the merchant's list, and the customer's
 * KYC status, read when the recipient's operator is on the list (null: not read, no gate).
 */
export interface CreateTransfer {
  transferId: string;
  merchantId: string;
  customerId: string;
  quoteId: string;
  /** The transfer quote being consumed (its transfer fields are set). */
  quote: QuoteCreated;
  payer: RailParty;
  recipient: Recipient;
  /** Whether the merchant sent an OTP (the OTP itself is sealed by the command layer, never decided on). */
  otpSupplied: boolean;
  kyc: KycGate;
  paymentReasonCode: string | null;
  senderSourceOfFunds: string | null;
  senderOccupation: string | null;
  metadata: Record<string, string>;
  /** The payer's and the recipient's operators' availability as read with this create (closed: refused). */
  availability: OperatorAvailabilities;
  at: string;
}

/** A leg's outcome from the provider gateway: a failure with the provider's code and, when told, the failure itself. */
interface LegSettlement {
  outcome: 'completed' | 'failed';
  providerReference: string | null;
  reason?: string;
  failure?: Failure;
  at: string;
}

export interface RelaunchPayout {
  /** The merchant asking: another merchant's transfer is not found. */
  merchantId: string;
  /** A new amount, as the request sent it (a decimal string); absent: the previous attempt's. */
  payoutAmount?: string;
  /** A new recipient; absent: the previous attempt's. */
  recipient?: Recipient;
  /** The request's idempotency claim id: a retry of a relaunch that was appended decides nothing. */
  relaunchId?: string;
  /** The recipient's operator's availability as it is now (CONTRACT §14: closed for payouts refuses). */
  availability: OperatorAvailabilities;
  at: string;
}

/** What may be asked of a transfer, each a plain value. */
export type TransferCommand =
  | { type: 'CreateTransfer'; data: CreateTransfer }
  | { type: 'StartCollection'; data: { at: string } }
  | { type: 'RecordCollectionSubmission'; data: { providerReference: string; at: string } }
  | { type: 'SettleCollection'; data: LegSettlement }
  | { type: 'RecordPayoutSubmission'; data: { attempt: number; providerReference: string; at: string } }
  | { type: 'SettlePayout'; data: LegSettlement & { attempt: number } }
  | { type: 'RelaunchPayout'; data: RelaunchPayout };

export interface TransferState {
  exists: boolean;
  created: TransferCreated | null;
  status: TransferStatus;
  payin_status: LegStatus;
  payout_status: LegStatus;
  collection: {
    leg_reference: string | null;
    provider_reference: string | null;
    started_at: string | null;
    completed_at: string | null;
    failed_at: string | null;
    failure_reason: FailureReason | null;
    provider_failure: ProviderFailure | null;
  };
  attempts: PayoutAttempt[];
  history: HistoryEntry[];
  updated_at: string;
}

export const collectionReference = (transferId: string) => `transfer:${transferId}:collection`;
export const payoutReference = (transferId: string, attempt: number) => `transfer:${transferId}:payout:${attempt}`;

const withStatus = (s: TransferState, status: TransferStatus, reason: string | null, at: string): TransferState => ({
  ...s,
  status,
  history: s.status === status && s.history.length > 0 ? s.history : [...s.history, { status, reason, created_at: at }],
  updated_at: at,
});

function patchAttempt(s: TransferState, attempt: number, patch: Partial<PayoutAttempt>): PayoutAttempt[] {
  return s.attempts.map((a) => (a.attempt === attempt ? { ...a, ...patch } : a));
}

export const transferDecider: CommandDecider<TransferState, TransferEvent, TransferCommand> = {
  initialState: (): TransferState => ({
    exists: false, created: null, status: 'pending', payin_status: 'not_started', payout_status: 'not_started',
    collection: {
      leg_reference: null, provider_reference: null, started_at: null, completed_at: null, failed_at: null, failure_reason: null, provider_failure: null,
    },
    attempts: [], history: [], updated_at: '',
  }),
  evolve(s: TransferState, e: TransferEvent): TransferState {
    switch (e.type) {
      case 'transfer.created':
        return withStatus({ ...s, exists: true, created: e.data }, 'pending', null, e.data.at);
      case 'transfer.collection_started':
        return withStatus({
          ...s, payin_status: 'pending',
          collection: { ...s.collection, leg_reference: e.data.leg_reference, started_at: e.data.at },
        }, 'collecting', null, e.data.at);
      case 'transfer.collection_submitted':
        return { ...s, collection: { ...s.collection, provider_reference: e.data.provider_reference }, updated_at: e.data.at };
      case 'transfer.payin.completed':
        return withStatus({
          ...s, payin_status: 'completed', payout_status: 'pending',
          collection: { ...s.collection, completed_at: e.data.at, provider_reference: e.data.provider_reference ?? s.collection.provider_reference },
        }, 'disbursing', null, e.data.at);
      case 'transfer.payin.failed': {
        const f = recordedFailure(e.data);
        return {
          ...s, payin_status: 'failed',
          collection: { ...s.collection, failed_at: e.data.at, failure_reason: f.failure_reason, provider_failure: f.provider_failure }, updated_at: e.data.at,
        };
      }
      case 'transfer.payout.started': {
        const attempt: PayoutAttempt = {
          attempt: e.data.attempt, leg_reference: e.data.leg_reference, amount: e.data.amount, recipient: e.data.recipient,
          status: 'pending', provider_reference: null, failure_reason: null, provider_failure: null, started_at: e.data.at, completed_at: null, failed_at: null,
          relaunch_id: e.data.relaunch_id ?? null,
        };
        return withStatus({ ...s, payout_status: 'pending', attempts: [...s.attempts, attempt] }, 'disbursing', e.data.attempt > 1 ? 'payout relaunched' : null, e.data.at);
      }
      case 'transfer.payout.submitted':
        return { ...s, attempts: patchAttempt(s, e.data.attempt, { provider_reference: e.data.provider_reference }), updated_at: e.data.at };
      case 'transfer.payout.completed':
        return {
          ...s, payout_status: 'completed',
          attempts: patchAttempt(s, e.data.attempt, {
            status: 'completed', completed_at: e.data.at,
            ...(e.data.provider_reference ? { provider_reference: e.data.provider_reference } : {}),
          }),
          updated_at: e.data.at,
        };
      case 'transfer.payout.failed': {
        const f = recordedFailure(e.data);
        return {
          ...s, payout_status: 'failed',
          attempts: patchAttempt(s, e.data.attempt, { status: 'failed', failed_at: e.data.at, failure_reason: f.failure_reason, provider_failure: f.provider_failure }),
          updated_at: e.data.at,
        };
      }
      case 'transfer.completed':
        return withStatus(s, 'completed', null, e.data.at);
      case 'transfer.failed':
        // The history says why in the merchant's words; the provider's code is on the leg.
        return withStatus(s, 'failed', recordedFailure(e.data).failure_reason, e.data.at);
      default:
        return unreachable(e);
    }
  },
  decide(command: TransferCommand, s: TransferState): TransferEvent[] {
    switch (command.type) {
      case 'CreateTransfer':
        return create(s, command.data);
      case 'StartCollection':
        return startCollection(s, command.data);
      case 'RecordCollectionSubmission':
        return collectionSubmitted(s, command.data);
      case 'SettleCollection':
        return collectionSettled(s, command.data);
      case 'RecordPayoutSubmission':
        return payoutSubmitted(s, command.data);
      case 'SettlePayout':
        return payoutSettled(s, command.data);
      case 'RelaunchPayout':
        return relaunchPayout(s, command.data);
      default:
        return unreachable(command);
    }
  },
};

export const currentAttempt = (s: TransferState): PayoutAttempt | undefined => s.attempts[s.attempts.length - 1];

// ---- decisions ----

/**
 * The merchant's transfer quote, as a create reads it before deciding (to know which wallet holds
 * the payout): another merchant's or none → quote_not_found, another flow's → quote_mismatch, the
 * answers consuming it gives.
 */
export function transferQuote(s: QuoteState, merchantId: string): QuoteCreated {
  if (!s.exists || s.quote!.merchant_id !== merchantId) {
    throw new DomainError('quote_not_found', 'Quote not found', [{ field: 'quote_id', message: 'no such quote for this merchant' }]);
  }
  if (s.quote!.flow_type !== 'transfer') {
    throw new DomainError('quote_mismatch', `This is a ${s.quote!.flow_type} quote, not a transfer quote`, [{ field: 'quote_id', message: 'must be a transfer quote' }]);
  }
  return s.quote!;
}

/** What a party must match: the quoted operator's country, code and rail. */
const partyOf = (operatorCode: string) => {
  const o = operator(operatorCode)!;
  return { country_code: o.country, operator_code: o.code, rail_type: o.railType };
};

/**
 * Neither operator closed for its leg (the payer's for payins, the recipient's for payouts), the
 * parties are checked against the quote and normalised, the KYC gate passed, and an OTP present
 * when the payer's operator requires one; the quote itself is consumed by the quote aggregate.
 */
function create(s: TransferState, c: CreateTransfer): TransferEvent[] {
  if (s.exists) return []; // the same create retried under its idempotency key
  const q = c.quote;
  requireAvailable(c.availability, [
    { operatorCode: q.payer_operator_code!, flow: 'payin', field: 'payer.operator_code' },
    { operatorCode: q.recipient_operator_code!, flow: 'payout', field: 'recipient.operator_code' },
  ]);
  const payer = checkParty(c.payer, partyOf(q.payer_operator_code!), 'payer');
  const recipient = checkParty(c.recipient, partyOf(q.recipient_operator_code!), 'recipient');
  // The disbursing operator may require the customer's KYC verified (routing kyc_required_operators).
  passKycGate(c.kyc, q.recipient_operator_code!);
  const otpRequired = operator(q.payer_operator_code!)!.requiresOtp;
  if (otpRequired && !c.otpSupplied) {
    throw new DomainError('otp_required', `${q.payer_operator_code} requires a one-time password to collect`, [{ field: 'otp', message: 'is required for this operator' }]);
  }
  const created: TransferEvent = {
    type: 'transfer.created',
    data: {
      transfer_id: c.transferId, merchant_id: c.merchantId, customer_id: c.customerId, quote_id: c.quoteId,
      payin_amount: q.payin_amount!, payin_currency: q.payin_currency!, payout_amount: q.payout_amount!, payout_currency: q.payout_currency!,
      total_fee: q.total_fee, corridor_code: q.corridor_code!, corridor_type: q.corridor_type!,
      payer_operator_code: q.payer_operator_code!, recipient_operator_code: q.recipient_operator_code!,
      payer, recipient, pricing: q.pricing as unknown as Record<string, unknown>, wallet_impact: q.wallet_impact,
      payment_reason_code: c.paymentReasonCode, sender_source_of_funds: c.senderSourceOfFunds, sender_occupation: c.senderOccupation,
      metadata: c.metadata, otp_required: otpRequired, otp_supplied: c.otpSupplied, at: c.at,
    },
  };
  // The collection starts in the same decision (issue 44): a separate saga step cost every transfer a
  // trip through the bus and an append of its own before its first leg could start. The saga still
  // starts the collection of a transfer created without it (by an earlier version of the service).
  return [created, ...startCollection(transferDecider.evolve(s, created), { at: c.at })];
}

/** The collection starts once (at the create, or by the saga for a transfer created without it); a redelivered trigger decides nothing. */
function startCollection(s: TransferState, c: { at: string }): TransferEvent[] {
  invariant(s.exists, 'collection for a transfer that does not exist');
  if (s.payin_status !== 'not_started') return [];
  const t = s.created!;
  return [{
    type: 'transfer.collection_started',
    data: {
      leg_reference: collectionReference(t.transfer_id), operator_code: t.payer_operator_code, phone: String(t.payer.phone),
      amount: t.payin_amount, currency: t.payin_currency, otp: t.otp_supplied ?? t.otp_required, at: c.at,
    },
  }];
}

function collectionSubmitted(s: TransferState, c: { providerReference: string; at: string }): TransferEvent[] {
  if (s.payin_status !== 'pending' || s.collection.provider_reference === c.providerReference) return [];
  return [{ type: 'transfer.collection_submitted', data: { provider_reference: c.providerReference, at: c.at } }];
}

/** A failed leg's failure as its events record it: the one the provider told, else read from its code. */
function failureFields(reason: string, told: Failure | undefined): Required<FailureFields> {
  const f = told ?? failureOfCode(reason);
  return { failure_reason: f.failure_reason, provider_failure: f.provider_failure };
}

/** Collection outcome. Completed: the disbursement starts in the same decision (attempt 1). */
function collectionSettled(s: TransferState, c: LegSettlement): TransferEvent[] {
  if (s.payin_status !== 'pending') return []; // already settled: a replayed outcome changes nothing
  if (c.outcome === 'completed') {
    const t = s.created!;
    return [
      { type: 'transfer.payin.completed', data: { provider_reference: c.providerReference, at: c.at } },
      { type: 'transfer.payout.started', data: { attempt: 1, leg_reference: payoutReference(t.transfer_id, 1), amount: t.payout_amount, currency: t.payout_currency, recipient: t.recipient, at: c.at } },
    ];
  }
  const reason = c.reason ?? 'COLLECTION_FAILED';
  const f = failureFields(reason, c.failure);
  return [
    { type: 'transfer.payin.failed', data: { reason, ...f, at: c.at } },
    { type: 'transfer.failed', data: { reason, ...f, at: c.at } },
  ];
}

function payoutSubmitted(s: TransferState, c: { attempt: number; providerReference: string; at: string }): TransferEvent[] {
  const a = s.attempts.find((x) => x.attempt === c.attempt);
  if (!a || a.status !== 'pending' || a.provider_reference === c.providerReference) return [];
  return [{ type: 'transfer.payout.submitted', data: { attempt: c.attempt, provider_reference: c.providerReference, at: c.at } }];
}

/** Disbursement outcome for one attempt; an outcome for an older or settled attempt changes nothing. */
function payoutSettled(s: TransferState, c: LegSettlement & { attempt: number }): TransferEvent[] {
  const a = currentAttempt(s);
  if (!a || a.attempt !== c.attempt || a.status !== 'pending') return [];
  if (c.outcome === 'completed') {
    return [
      { type: 'transfer.payout.completed', data: { attempt: c.attempt, provider_reference: c.providerReference, at: c.at } },
      { type: 'transfer.completed', data: { at: c.at } },
    ];
  }
  const reason = c.reason ?? 'DISBURSEMENT_FAILED';
  const f = failureFields(reason, c.failure);
  return [
    { type: 'transfer.payout.failed', data: { attempt: c.attempt, reason, ...f, at: c.at } },
    { type: 'transfer.failed', data: { reason, ...f, at: c.at } },
  ];
}

/**
 * Relaunch a failed disbursement (CONTRACT.md §5): never collects again. A new amount is within the
 * limits, a new recipient matches the quoted operator.
 */
function relaunchPayout(s: TransferState, c: RelaunchPayout): TransferEvent[] {
  if (!s.exists || s.created!.merchant_id !== c.merchantId) refuse('not_found', 'Transfer not found');
  const t = s.created!;
  let amount: string | undefined;
  if (c.payoutAmount !== undefined) {
    const parsed = parseAmount(c.payoutAmount, 'payout_amount');
    checkAmountRange(parsed, 'payout_amount');
    amount = parsed.toString();
  }
  const recipient = c.recipient === undefined ? undefined : checkParty(c.recipient, partyOf(t.recipient_operator_code), 'recipient');
  // The same request again (a retry after the process died before answering): already done.
  if (c.relaunchId !== undefined && s.attempts.some((a) => a.relaunch_id === c.relaunchId)) return [];
  if (!(s.status === 'failed' && s.payin_status === 'completed' && s.payout_status === 'failed')) {
    refuse('relaunch_not_allowed', 'A payout can be relaunched only when the transfer failed after its collection completed and its payout failed');
  }
  // A new disbursement is a new payout leg: refused while its operator is closed for payouts.
  requireAvailable(c.availability, [{ operatorCode: t.recipient_operator_code, flow: 'payout', field: 'recipient.operator_code' }]);
  const last = currentAttempt(s)!;
  const attempt = last.attempt + 1;
  return [{
    type: 'transfer.payout.started',
    data: {
      attempt, leg_reference: payoutReference(t.transfer_id, attempt),
      amount: amount ?? last.amount, currency: t.payout_currency, recipient: recipient ?? last.recipient, at: c.at,
      ...(c.relaunchId !== undefined ? { relaunch_id: c.relaunchId } : {}),
    },
  }];
}
