// A leg's status, asked at the provider that has it (CONTRACT §15): on the durable schedule the
// gateway keeps for every leg not final (back-off from the first check, doubling, at most 5 min, for
// ever), and at once when a callback hints that it moved. A leg's outcome is only ever what a status
// query answers: a callback is never trusted (MTN's carry no signature).
//
// "Never seen" after an initiation in doubt means the provider did not take it: the leg is started
// again under the same reference (the same provider first, the next ones after a certain refusal),
// except a collection that carried an OTP, which is never kept: it fails `expired`.
import type { Services } from './services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { Job } from '../infra/scheduler.ts';
import { adapter } from '../infra/providers/index.ts';
import type { LegKind } from '../infra/providers/types.ts';
import type { LegRequest } from './legs.ts';
import { legOwnerNamed, legOutcomeOf, observeLegSettled } from './leg-outcomes.ts';
import { CHECK_JOB, firstCheckDelayMs, refused, startLeg, type CheckPayload } from './leg-initiation.ts';

export const GATEWAY = 'provider-gateway';
/** Re-checks of a pending leg back off up to this delay, and go on for ever at it. */
export const MAX_CHECK_DELAY_MS = 5 * 60_000;

/** Delay before re-check n (1-based) of a leg still pending: the first check's delay, doubling, capped. */
export function checkDelayMs(firstMs: number, attempt: number): number {
  const base = Math.max(firstMs, 50);
  return Math.min(MAX_CHECK_DELAY_MS, base * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
}

/** The leg as it was asked, to start it again (its OTP was never kept). */
function legOf(p: CheckPayload): LegRequest | undefined {
  const l = p.leg;
  if (!l || !p.kind) return undefined;
  return {
    owner: l.owner, reference: p.reference, kind: p.kind as LegKind, operatorCode: l.operatorCode, phone: l.phone, amount: BigInt(l.amount),
    currency: l.currency, otp: l.otp, paymentId: l.paymentId, refundOf: l.refundOf,
  };
}

/** One status check: settle the leg, or look again later (a pending leg is never dropped). */
export async function checkLeg(s: Services, job: Job<CheckPayload>): Promise<void | { retryAt: Date }> {
  const { reference, owner: ownerName, provider } = job.payload;
  const owner = legOwnerNamed(ownerName);
  if (!(await owner.isOpen(s, reference))) return; // settled meanwhile (a callback, another process)
  const kind = (job.payload.kind ?? 'collection') as LegKind;
  const status = await s.metrics.timeProvider(provider, 'status', () => adapter(s, provider).status({ reference, kind }));
  // Caused by the event that started the leg; the job that found the outcome is named too.
  const jobName = `${CHECK_JOB}:${reference}`;
  const meta: EventMetadata = { actor: GATEWAY, causationId: job.payload.causationId ?? jobName, job: jobName };
  if (!status) return neverSeen(s, job.payload, meta);
  const outcome = legOutcomeOf(status);
  if (!outcome) return { retryAt: new Date(s.clock.now().getTime() + checkDelayMs(firstCheckDelayMs(s, provider), job.attempts)) };
  const { startedAt } = job.payload;
  const known = startedAt ? { provider, kind, created_at: startedAt } : undefined;
  await observeLegSettled(s, reference, outcome, await owner.settled(s, reference, outcome, meta), known);
}

/** The provider has never seen the leg: after an initiation in doubt, it was not taken. */
async function neverSeen(s: Services, p: CheckPayload, meta: EventMetadata): Promise<void> {
  const leg = legOf(p);
  // Not after a doubt (it answered a status before), or a job from before the leg was kept: an error, retried with back-off.
  if (!p.inDoubt || !leg) throw new Error(`provider ${p.provider} does not know leg ${p.reference}`);
  if (leg.otp) {
    await refused(s, leg, { failureReason: 'expired', provider: p.provider, code: 'OTP_NOT_KEPT', message: 'The provider never took the collection and its one-time code is not kept: ask the payer again' }, meta);
    return;
  }
  await startLeg(s, leg, meta);
}

/** A callback hinted that the leg moved: ask its status now (the scheduled checks go on regardless). */
export async function checkNow(s: Services, leg: { reference: string; owner: string; provider: string; kind: string }, meta: EventMetadata): Promise<bigint | undefined> {
  const owner = legOwnerNamed(leg.owner);
  if (!(await owner.isOpen(s, leg.reference))) return undefined;
  const status = await s.metrics.timeProvider(leg.provider, 'status', () => adapter(s, leg.provider).status({ reference: leg.reference, kind: leg.kind as LegKind }));
  const outcome = status && legOutcomeOf(status);
  if (!outcome) return undefined;
  const position = await owner.settled(s, leg.reference, outcome, meta);
  await observeLegSettled(s, leg.reference, outcome, position);
  return position;
}
