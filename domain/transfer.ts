// The two-leg transfer: collect from the payer, then disburse to the recipient (CONTRACT.md §4, §5).
// Pure: time, ids and provider outcomes arrive in the commands. Wallet effects are decided by the
// wallet aggregate; the command layer appends both atomically.
import { refuse, invariant } from './errors.ts';
import { unreachable, type DomainEvent } from './decider.ts';
import type { RailParty, Recipient } from './payment.ts';

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
  failure_reason: string | null;
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

export type TransferEvent =
  | DomainEvent<'transfer.created', TransferCreated>
  | DomainEvent<'transfer.collection_started', { leg_reference: string; operator_code: string; phone: string; amount: string; currency: string; otp: boolean; at: string }>
  | DomainEvent<'transfer.collection_submitted', { provider_reference: string; at: string }>
  | DomainEvent<'transfer.payin.completed', { provider_reference: string | null; at: string }>
  | DomainEvent<'transfer.payin.failed', { reason: string; at: string }>
  | DomainEvent<'transfer.payout.started', { attempt: number; leg_reference: string; amount: string; currency: string; recipient: Recipient; at: string; relaunch_id?: string }>
  | DomainEvent<'transfer.payout.submitted', { attempt: number; provider_reference: string; at: string }>
  | DomainEvent<'transfer.payout.completed', { attempt: number; provider_reference: string | null; at: string }>
  | DomainEvent<'transfer.payout.failed', { attempt: number; reason: string; at: string }>
  | DomainEvent<'transfer.completed', { at: string }>
  | DomainEvent<'transfer.failed', { reason: string; at: string }>;

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
    failure_reason: string | null;
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

export const transferDecider = {
  initialState: (): TransferState => ({
    exists: false, created: null, status: 'pending', payin_status: 'not_started', payout_status: 'not_started',
    collection: { leg_reference: null, provider_reference: null, started_at: null, completed_at: null, failed_at: null, failure_reason: null },
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
      case 'transfer.payin.failed':
        return {
          ...s, payin_status: 'failed',
          collection: { ...s.collection, failed_at: e.data.at, failure_reason: e.data.reason }, updated_at: e.data.at,
        };
      case 'transfer.payout.started': {
        const attempt: PayoutAttempt = {
          attempt: e.data.attempt, leg_reference: e.data.leg_reference, amount: e.data.amount, recipient: e.data.recipient,
          status: 'pending', provider_reference: null, failure_reason: null, started_at: e.data.at, completed_at: null, failed_at: null,
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
      case 'transfer.payout.failed':
        return {
          ...s, payout_status: 'failed',
          attempts: patchAttempt(s, e.data.attempt, { status: 'failed', failed_at: e.data.at, failure_reason: e.data.reason }),
          updated_at: e.data.at,
        };
      case 'transfer.completed':
        return withStatus(s, 'completed', null, e.data.at);
      case 'transfer.failed':
        return withStatus(s, 'failed', e.data.reason, e.data.at);
      default:
        return unreachable(e);
    }
  },
};

export const currentAttempt = (s: TransferState): PayoutAttempt | undefined => s.attempts[s.attempts.length - 1];

// ---- decisions ----

export function create(s: TransferState, c: TransferCreated): TransferEvent[] {
  if (s.exists) return []; // the same create retried under its idempotency key
  return [{ type: 'transfer.created', data: c }];
}

/** The saga starts the collection once; a redelivered trigger decides nothing. */
export function startCollection(s: TransferState, c: { at: string }): TransferEvent[] {
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

export function collectionSubmitted(s: TransferState, c: { providerReference: string; at: string }): TransferEvent[] {
  if (s.payin_status !== 'pending' || s.collection.provider_reference === c.providerReference) return [];
  return [{ type: 'transfer.collection_submitted', data: { provider_reference: c.providerReference, at: c.at } }];
}

/** Collection outcome. Completed: the disbursement starts in the same decision (attempt 1). */
export function collectionSettled(
  s: TransferState,
  c: { outcome: 'completed' | 'failed'; providerReference: string | null; reason?: string; at: string },
): TransferEvent[] {
  if (s.payin_status !== 'pending') return []; // already settled: a replayed outcome changes nothing
  if (c.outcome === 'completed') {
    const t = s.created!;
    return [
      { type: 'transfer.payin.completed', data: { provider_reference: c.providerReference, at: c.at } },
      { type: 'transfer.payout.started', data: { attempt: 1, leg_reference: payoutReference(t.transfer_id, 1), amount: t.payout_amount, currency: t.payout_currency, recipient: t.recipient, at: c.at } },
    ];
  }
  const reason = c.reason ?? 'COLLECTION_FAILED';
  return [
    { type: 'transfer.payin.failed', data: { reason, at: c.at } },
    { type: 'transfer.failed', data: { reason, at: c.at } },
  ];
}

export function payoutSubmitted(s: TransferState, c: { attempt: number; providerReference: string; at: string }): TransferEvent[] {
  const a = s.attempts.find((x) => x.attempt === c.attempt);
  if (!a || a.status !== 'pending' || a.provider_reference === c.providerReference) return [];
  return [{ type: 'transfer.payout.submitted', data: { attempt: c.attempt, provider_reference: c.providerReference, at: c.at } }];
}

/** Disbursement outcome for one attempt; an outcome for an older or settled attempt changes nothing. */
export function payoutSettled(
  s: TransferState,
  c: { attempt: number; outcome: 'completed' | 'failed'; providerReference: string | null; reason?: string; at: string },
): TransferEvent[] {
  const a = currentAttempt(s);
  if (!a || a.attempt !== c.attempt || a.status !== 'pending') return [];
  if (c.outcome === 'completed') {
    return [
      { type: 'transfer.payout.completed', data: { attempt: c.attempt, provider_reference: c.providerReference, at: c.at } },
      { type: 'transfer.completed', data: { at: c.at } },
    ];
  }
  const reason = c.reason ?? 'DISBURSEMENT_FAILED';
  return [
    { type: 'transfer.payout.failed', data: { attempt: c.attempt, reason, at: c.at } },
    { type: 'transfer.failed', data: { reason, at: c.at } },
  ];
}

/** Relaunch a failed disbursement (CONTRACT.md §5): never collects again. */
export function relaunchPayout(
  s: TransferState,
  c: { payoutAmount?: string; recipient?: Recipient; at: string; relaunchId?: string },
): TransferEvent[] {
  if (!s.exists) refuse('not_found', 'Transfer not found');
  // The same request again (a retry after the process died before answering): already done.
  if (c.relaunchId !== undefined && s.attempts.some((a) => a.relaunch_id === c.relaunchId)) return [];
  if (!(s.status === 'failed' && s.payin_status === 'completed' && s.payout_status === 'failed')) {
    refuse('relaunch_not_allowed', 'A payout can be relaunched only when the transfer failed after its collection completed and its payout failed');
  }
  const last = currentAttempt(s)!;
  const attempt = last.attempt + 1;
  return [{
    type: 'transfer.payout.started',
    data: {
      attempt, leg_reference: payoutReference(s.created!.transfer_id, attempt),
      amount: c.payoutAmount ?? last.amount, currency: s.created!.payout_currency, recipient: c.recipient ?? last.recipient, at: c.at,
      ...(c.relaunchId !== undefined ? { relaunch_id: c.relaunchId } : {}),
    },
  }];
}
