// The sandbox provider (CONTRACT.md §3): a simulated mobile-money operator with its own books in
// `sandbox_provider_legs`, so its state survives restarts like a real external system's would.
//
// Outcome, fixed when the leg is initiated, by the phone of the party collected from or paid:
//   ends in 99  → the leg fails: collections `INSUFFICIENT_FUNDS` (`PAYER_NOT_FOUND` when it ends
//                 in 999), disbursements `RECIPIENT_NOT_FOUND`
//   ends in 98  → the leg stays pending for ever (only a callback settles it)
//   otherwise   → the leg completes
// A refund leg goes by its amount instead (refundPlan): ends in 99 fails, 98 stays pending, else completes.
// A collection with OTP `000000` fails `INVALID_OTP`; one on an OTP operator without an OTP fails
// `OTP_REQUIRED`. Every leg settles `settleMs` after it was initiated, when its status is asked.
//
// Callbacks: `callbackFor()` plays the operator: it settles a leg and returns the signed request the
// operator would send to POST /provider-callbacks/sandbox (header `x-sandbox-signature`, an HMAC
// under the server key over the fields in a fixed order).
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from '../clock.ts';
import type { Secrets } from '../secrets.ts';
import { operator } from '../../domain/catalogue.ts';
import { sandboxFailure } from '../../domain/failure-reasons.ts';
import { StatementBatcher } from '../statement-batcher.ts';
import { CallbackRejected, type CallbackReading, type CallbackRequest, type InitiateLeg, type LegLookup, type ProviderAdapter, type ProviderStatus } from './types.ts';

export const SANDBOX = 'sandbox';
export const INVALID_OTP = '000000';
const SIGNATURE_HEADER = 'x-sandbox-signature';

interface Row {
  reference: string;
  provider_reference: string;
  kind: string;
  planned: 'completed' | 'failed' | 'stuck';
  planned_reason: string | null;
  state: 'pending' | 'completed' | 'failed';
  reason: string | null;
  settle_at: Date | string;
}

function plan(leg: InitiateLeg): { planned: Row['planned']; reason: string | null } {
  if (leg.kind === 'refund') return refundPlan(leg.amount);
  if (leg.kind === 'collection') {
    if (operator(leg.operatorCode)?.requiresOtp && !leg.otp) return { planned: 'failed', reason: 'OTP_REQUIRED' };
    if (leg.otp === INVALID_OTP) return { planned: 'failed', reason: 'INVALID_OTP' };
  }
  if (leg.phone.endsWith('99')) {
    if (leg.kind === 'disbursement') return { planned: 'failed', reason: 'RECIPIENT_NOT_FOUND' };
    return { planned: 'failed', reason: leg.phone.endsWith('999') ? 'PAYER_NOT_FOUND' : 'INSUFFICIENT_FUNDS' };
  }
  if (leg.phone.endsWith('98')) return { planned: 'stuck', reason: null };
  return { planned: 'completed', reason: null };
}

/**
 * A refund leg is settled by its amount (CONTRACT §9), not its phone: the payer's phone cannot
 * choose it (a payin from a phone ending in 98 or 99 never completes, so is never refunded).
 */
function refundPlan(amount: bigint): { planned: Row['planned']; reason: string | null } {
  const last = amount % 100n;
  if (last === 99n) return { planned: 'failed', reason: 'REFUND_REJECTED' };
  if (last === 98n) return { planned: 'stuck', reason: null };
  return { planned: 'completed', reason: null };
}

/** A leg as initiated: the row written to the sandbox's books. */
interface Insert {
  reference: string;
  provider_reference: string;
  kind: string;
  operator_code: string;
  phone: string;
  amount: string;
  currency: string;
  planned: Row['planned'];
  planned_reason: string | null;
  state: Row['state'];
  reason: string | null;
  settle_at: Date;
  settled_at: Date | null;
  created_at: Date;
}

function statusOf(row: Row): ProviderStatus {
  if (row.state === 'failed') {
    // The sandbox's code, what it means for the merchant and its message (CONTRACT §15; domain/failure-reasons.ts).
    const reason = row.reason ?? 'FAILED';
    const f = sandboxFailure(reason);
    const failure = { failureReason: f.failure_reason, provider: SANDBOX, code: reason, message: f.provider_failure.message };
    return { state: 'failed', providerReference: row.provider_reference, reason, failure };
  }
  return { state: row.state, providerReference: row.provider_reference };
}

/** What a sandbox callback's signature covers (exported for tests that play a misbehaving operator). */
export const signedText = (c: { reference: string; provider_reference: string; status: string; reason: string | null }) =>
  `sandbox-callback\n${c.reference}\n${c.provider_reference}\n${c.status}\n${c.reason ?? ''}`;

export class SandboxProvider implements ProviderAdapter {
  readonly name = SANDBOX;

  /** Every operator of the catalogue (CONTRACT §3). */
  serves(operatorCode: string): boolean {
    return operator(operatorCode) !== undefined;
  }

  /** The sandbox keeps our reference as its own id. */
  legId(reference: string): string {
    return reference;
  }

  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    private readonly settleMs: number,
  ) {}

  /**
   * Legs initiated, and statuses asked, within one turn of the event loop: one statement each
   * (bench issue 8: these were two of the ~14 statements a payin costs the service). Each call
   * answers as it would alone: the statement runs after every call in it was made.
   */
  private readonly inserts = new StatementBatcher<Insert, Row | undefined>((legs) => this.insertAll(legs));
  private readonly statuses = new StatementBatcher<string, Row | undefined>((refs) => this.settleAll(refs));

  async initiate(leg: InitiateLeg): Promise<ProviderStatus> {
    const now = this.clock.now();
    const { planned, reason } = plan(leg);
    // With no settle time a leg is due the moment it exists: it is written settled, as the first
    // status() would settle it (one statement instead of an insert, an update and a read).
    const settled = this.settleMs <= 0 && planned !== 'stuck';
    const row = await this.inserts.submit({
      reference: leg.reference, provider_reference: `SBX-${randomBytes(8).toString('hex').toUpperCase()}`, kind: leg.kind,
      operator_code: leg.operatorCode, phone: leg.phone, amount: leg.amount.toString(), currency: leg.currency, planned,
      planned_reason: reason, state: settled ? planned : 'pending', reason: settled ? reason : null,
      settle_at: new Date(now.getTime() + this.settleMs), settled_at: settled ? now : null, created_at: now,
    });
    // The reference is the idempotency key: a second initiate finds the first leg and changes nothing.
    return row ? statusOf(row) : (await this.status(leg))!;
  }

  /** The legs inserted, each answered with its row; undefined where the reference existed already. */
  private async insertAll(legs: Insert[]): Promise<Array<Row | undefined>> {
    // Times as ISO text: an array of Date would go as the driver's local-time text.
    const col = <K extends keyof Insert>(k: K) => legs.map((l) => { const v = l[k]; return v instanceof Date ? v.toISOString() : v; });
    const r = await this.knex.raw<{ rows: Row[] }>(
      `INSERT INTO sandbox_provider_legs
         (reference, provider_reference, kind, operator_code, phone, amount, currency, planned, planned_reason, state, reason, settle_at, settled_at, created_at)
       SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::numeric[], ?::text[], ?::text[], ?::text[],
                            ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[])
       ON CONFLICT (reference) DO NOTHING
       RETURNING *`,
      [col('reference'), col('provider_reference'), col('kind'), col('operator_code'), col('phone'), col('amount'), col('currency'),
        col('planned'), col('planned_reason'), col('state'), col('reason'), col('settle_at'), col('settled_at'), col('created_at')] as Knex.RawBinding[],
    );
    // A reference twice in one statement is inserted once: the first call gets the row, the other finds it by status().
    const byRef = new Map(r.rows.map((row) => [row.reference, row]));
    return legs.map((l) => {
      const row = byRef.get(l.reference);
      byRef.delete(l.reference);
      return row;
    });
  }

  async status(leg: LegLookup): Promise<ProviderStatus | undefined> {
    const row = await this.statuses.submit(leg.reference);
    return row ? statusOf(row) : undefined;
  }

  /**
   * Each leg's status; a due leg settles to its planned outcome, once (state = 'pending' guards a
   * concurrent reader). The legs are read in the same statement: the outer SELECT sees a row as it
   * was before the UPDATE, so it answers only for the legs the UPDATE did not change.
   */
  private async settleAll(references: string[]): Promise<Array<Row | undefined>> {
    const now = this.clock.now();
    const wanted = [...new Set(references)];
    const r = await this.knex.raw<{ rows: Row[] }>(
      `WITH settled AS (
         UPDATE sandbox_provider_legs SET state = planned, reason = planned_reason, settled_at = ?
         WHERE reference = ANY(?::text[]) AND state = 'pending' AND planned <> 'stuck' AND settle_at <= ?
         RETURNING *)
       SELECT * FROM settled
       UNION ALL
       SELECT * FROM sandbox_provider_legs l
       WHERE l.reference = ANY(?::text[]) AND NOT EXISTS (SELECT 1 FROM settled s WHERE s.reference = l.reference)`,
      [now, wanted, now, wanted],
    );
    const byRef = new Map(r.rows.map((row) => [row.reference, row]));
    return references.map((ref) => byRef.get(ref));
  }

  /**
   * Plays the operator sending a callback: settles the leg (if still pending) and returns the signed
   * request body and headers. Returns undefined for an unknown reference.
   */
  async callbackFor(reference: string, outcome: { state: 'completed' } | { state: 'failed'; reason: string }): Promise<{ body: Record<string, unknown>; headers: Record<string, string> } | undefined> {
    const reason = outcome.state === 'failed' ? outcome.reason : null;
    await this.knex('sandbox_provider_legs').where({ reference, state: 'pending' })
      .update({ state: outcome.state, reason, settled_at: this.clock.now() });
    const row = (await this.knex('sandbox_provider_legs').where({ reference }).first()) as Row | undefined;
    if (!row) return undefined;
    const body = { reference: row.reference, provider_reference: row.provider_reference, status: row.state, reason: row.reason };
    return { body, headers: { [SIGNATURE_HEADER]: this.secrets.hash(signedText(body)) } };
  }

  /** The sandbox signs its callbacks with our own key: a verified one is an outcome, not a hint. */
  async readCallback(req: CallbackRequest): Promise<CallbackReading> {
    const signature = req.headers[SIGNATURE_HEADER];
    const b = req.body as Record<string, unknown> | null;
    const text = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined);
    const reference = text(b?.reference);
    const providerReference = text(b?.provider_reference);
    const status = b?.status;
    const reason = b?.reason === null || b?.reason === undefined ? null : text(b.reason);
    if (typeof signature !== 'string' || !reference || !providerReference || reason === undefined ||
      (status !== 'pending' && status !== 'completed' && status !== 'failed')) {
      throw new CallbackRejected('malformed sandbox callback');
    }
    if (!this.secrets.matches(signedText({ reference, provider_reference: providerReference, status, reason }), signature)) {
      throw new CallbackRejected('bad sandbox callback signature');
    }
    const st: ProviderStatus = status === 'failed'
      ? { state: 'failed', providerReference, reason: reason ?? 'FAILED' }
      : { state: status, providerReference };
    return { kind: 'outcome', callback: { reference, status: st } };
  }
}
