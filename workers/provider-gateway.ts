// The provider gateway: the one place that talks to mobile-money operators.
//
//   bus `events.<trigger>` ──► startLeg ──► adapter.initiate (idempotent by reference)
//                                   │           ├─ provider_legs row (reference → owner, provider)
//                                   │           └─ owner.submitted (provider_reference)
//                                   └─► durable job `provider-check` (key = reference) at now + SANDBOX_SETTLE_MS
//   job `provider-check` ──► adapter.status ──► pending: again later (growing delay, capped, never dropped)
//                                          └──► completed | failed: owner.settled
//   POST /provider-callbacks/{provider} ──► adapter.parseCallback (verified) ──► owner.settled
//     (commands/leg-outcomes.ts, settleLegFromCallback)
//
// Every step is idempotent, so a redelivered trigger, a re-run job or a replayed callback never
// initiates twice or moves money twice: the adapter dedupes by reference, the owner's decisions
// decide nothing once the leg has settled, the job is keyed by reference.
//
// Plugging in another leg owner (transfers): implement LegOwner (commands/legs.ts) with a trigger per
// event that starts a leg (e.g. `transfer.collection_started` → collection leg with reference
// `transfer:<id>:collection` and otp = the sealed OTP flag; `transfer.payout.started` →
// disbursement leg `transfer:<id>:payout:<n>`), `isOpen`, `submitted` and `settled` (which appends
// the transfer's leg outcome and the wallet effect in one append), and add it to
// commands/leg-owners.ts. A command may also call `startLeg` directly.
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { Job } from '../infra/scheduler.ts';
import { otpVault } from '../infra/otp-vault.ts';
import { adapter, providerNameFor } from '../infra/providers/index.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import { legOwners } from '../commands/leg-owners.ts';
import { legOwnerNamed, legOutcomeOf, observeLegSettled } from '../commands/leg-outcomes.ts';
import { neverGiveUp } from './never-give-up.ts';
import { crashPoint } from '../infra/crash-points.ts';
import type { LegRequest } from '../commands/legs.ts';
import type { LegKind } from '../infra/providers/types.ts';
import { recordLeg, setProviderReference } from '../commands/provider-legs.ts';

export const GATEWAY = 'provider-gateway';
export const CHECK_JOB = 'provider-check';
/** Re-checks of a pending leg back off up to this delay, and go on for ever at it. */
export const MAX_CHECK_DELAY_MS = 5 * 60_000;
const PURGE_EVERY_MS = 60_000;

interface CheckPayload {
  reference: string;
  owner: string;
  provider: string;
  /** The event that started the leg: the settlement's causation (absent in jobs scheduled before it was kept). */
  causationId?: string;
  /** The leg's kind and first start (its provider_legs row), for the latency metric without a read. */
  kind?: string;
  startedAt?: string;
}

/** Delay before re-check n (1-based) of a leg still pending: settle time, doubling, capped. */
export function checkDelayMs(settleMs: number, attempt: number): number {
  const base = Math.max(settleMs, 50);
  return Math.min(MAX_CHECK_DELAY_MS, base * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
}

/**
 * Initiates a leg with its operator's provider and schedules its status check. Safe to call any
 * number of times for one reference.
 */
export async function startLeg(s: Services, leg: LegRequest, meta: EventMetadata): Promise<void> {
  const owner = legOwnerNamed(leg.owner);
  if (!(await owner.isOpen(s, leg.reference))) return; // settled already: nothing to start
  const providerName = providerNameFor(leg.operatorCode);
  const now = s.clock.now();
  await recordLeg(s, { reference: leg.reference, owner: leg.owner, provider: providerName, kind: leg.kind, createdAt: now });
  const vault = otpVault(s);
  const otp = leg.otp ? await vault.peek(leg.reference) : undefined;
  const status = await s.metrics.timeProvider(providerName, 'initiate', () => adapter(s, providerName).initiate({
    reference: leg.reference, kind: leg.kind, operatorCode: leg.operatorCode, phone: leg.phone,
    amount: leg.amount, currency: leg.currency, otp,
  }));
  crashPoint('after-provider-call');
  // The provider has the OTP now (or the leg was started before): it has no further use here.
  if (leg.otp) await vault.discard(leg.reference);
  const legRow = await setProviderReference(s, leg.reference, status.providerReference);
  await owner.submitted(s, leg.reference, status.providerReference, meta);
  const outcome = legOutcomeOf(status);
  if (outcome) {
    await observeLegSettled(s, leg.reference, outcome, await owner.settled(s, leg.reference, outcome, meta), legRow);
    return;
  }
  const payload: CheckPayload = {
    reference: leg.reference, owner: leg.owner, provider: providerName,
    ...(typeof meta.causationId === 'string' ? { causationId: meta.causationId } : {}),
    ...(legRow ? { kind: legRow.kind, startedAt: new Date(legRow.created_at).toISOString() } : {}),
  };
  await s.scheduler.schedule(CHECK_JOB, leg.reference, payload, new Date(now.getTime() + s.config.sandboxSettleMs));
}

/** One status check: settle the leg, or look again later (a pending leg is never dropped). */
export async function checkLeg(s: Services, job: Job<CheckPayload>): Promise<void | { retryAt: Date }> {
  const { reference, owner: ownerName, provider } = job.payload;
  const owner = legOwnerNamed(ownerName);
  if (!(await owner.isOpen(s, reference))) return; // settled meanwhile (a callback, another process)
  const status = await s.metrics.timeProvider(provider, 'status', () => adapter(s, provider).status({ reference, kind: (job.payload.kind ?? 'collection') as LegKind }));
  if (!status) throw new Error(`provider ${provider} does not know leg ${reference}`); // retried with backoff
  const outcome = legOutcomeOf(status);
  if (!outcome) return { retryAt: new Date(s.clock.now().getTime() + checkDelayMs(s.config.sandboxSettleMs, job.attempts)) };
  // Caused by the event that started the leg; the job that found the outcome is named too.
  const jobName = `${CHECK_JOB}:${reference}`;
  const meta: EventMetadata = { actor: GATEWAY, causationId: job.payload.causationId ?? jobName, job: jobName };
  const { kind, startedAt } = job.payload;
  const known = kind && startedAt ? { provider, kind, created_at: startedAt } : undefined;
  await observeLegSettled(s, reference, outcome, await owner.settled(s, reference, outcome, meta), known);
}

export const providerGateway: Worker = {
  name: GATEWAY,
  consumes: () => legOwners.flatMap((o) => Object.keys(o.triggers)),
  async start(s: Services) {
    s.scheduler.register(CHECK_JOB, (job) => checkLeg(s, job as Job<CheckPayload>), { concurrency: 16 });
    const triggers = new Map<string, (e: ForwardedEvent) => LegRequest | undefined>();
    for (const o of legOwners) for (const [type, read] of Object.entries(o.triggers)) triggers.set(type, read);
    const consumer = await s.bus.consume(neverGiveUp(s.log, {
      durable: GATEWAY,
      subjects: [...triggers.keys()].map(subjectOf),
      concurrency: 8,
      handler: async (msg) => {
        const e = msg.data as ForwardedEvent;
        const leg = triggers.get(e.type)?.(e);
        if (leg) await startLeg(s, leg, { actor: GATEWAY, causationId: e.id, correlationId: e.stream_id });
      },
    }));
    const vault = otpVault(s);
    const purge = setInterval(() => {
      vault.purgeExpired().catch((err) => s.log.warn({ err }, 'otp vault purge failed'));
    }, PURGE_EVERY_MS);
    purge.unref();
    return async () => {
      clearInterval(purge);
      await consumer.stop();
    };
  },
};
