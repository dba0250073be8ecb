// A provider leg's final outcome, however it arrives: from the gateway's status check or start
// (workers/provider-gateway.ts), or from a verified provider callback (POST /provider-callbacks/{provider}).
// Either way the leg's owner (commands/leg-owners.ts) settles it, idempotently.
import type { Services } from './services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { LegOutcome } from '../domain/payment.ts';
import type { ProviderStatus } from '../infra/providers/types.ts';
import { failureOfCode, type Failure } from '../domain/failure-reasons.ts';
import { legOwners } from './leg-owners.ts';
import type { LegOwner } from './legs.ts';
import type { LegRow } from './provider-legs.ts';

export function legOwnerNamed(name: string): LegOwner {
  const o = legOwners.find((x) => x.name === name);
  if (!o) throw new Error(`no leg owner ${name}`);
  return o;
}

/**
 * The adapter's status as the domain's outcome, or undefined while pending. A failure the provider
 * told (ProviderStatus.failure) goes in the domain's terms (CONTRACT §15); one without it is read
 * from the provider's code (domain/failure-reasons.ts failureOfCode).
 */
export const legOutcomeOf = (st: ProviderStatus): LegOutcome | undefined => {
  if (st.state === 'completed') return { outcome: 'completed', providerReference: st.providerReference };
  if (st.state !== 'failed') return undefined;
  const f = st.failure;
  const failure: Failure = f
    ? { failure_reason: f.failureReason, provider_failure: { provider: f.provider, code: f.code, message: f.message } }
    : failureOfCode(st.reason);
  return { outcome: 'failed', providerReference: st.providerReference, reason: st.reason, failure };
};

/** Provider leg latency: from the leg's start (its provider_legs row) to its settlement, once. */
export async function observeLegSettled(s: Services, reference: string, outcome: LegOutcome, position: bigint | undefined, known?: LegRow): Promise<void> {
  if (position === undefined) return; // settled before (another path got there first): counted then
  const row = known ?? (await s.knex('provider_legs').where({ reference }).first('provider', 'kind', 'created_at')) as LegRow | undefined;
  if (!row) return;
  const seconds = Math.max(0, s.clock.now().getTime() - new Date(row.created_at).getTime()) / 1000;
  s.metrics.providerLegs.observe({ provider: row.provider, kind: row.kind, outcome: outcome.outcome }, seconds);
}
