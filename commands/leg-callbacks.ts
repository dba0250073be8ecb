// A provider's callback (CONTRACT §15): the sandbox's, signed with our own key, is an outcome and
// settles its leg like a status check; a real provider's is only a hint: the leg it names (by the
// provider's own id) has its status asked at once, and that answer alone is recorded. A forged,
// stale or replayed callback changes nothing: it can at most make us ask a status sooner.
import type { Services } from './services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { CallbackRequest } from '../infra/providers/types.ts';
import { adapter } from '../infra/providers/index.ts';
import { legOwnerNamed, legOutcomeOf, observeLegSettled } from './leg-outcomes.ts';
import { legByProviderId } from './provider-legs.ts';
import { checkNow } from './leg-checks.ts';

/** What a callback came to: a leg of ours acted on, an unknown leg, or one ignored (its signature failed). */
export type CallbackResult = 'acted' | 'unknown_leg' | 'ignored';

/** Reads a callback (throws CallbackRejected when it is not well-formed) and acts on it. */
export async function handleProviderCallback(s: Services, providerName: string, req: CallbackRequest, meta: EventMetadata): Promise<CallbackResult> {
  const reading = await adapter(s, providerName).readCallback(req);
  if (reading.kind === 'ignored') {
    s.log.warn({ provider: providerName, why: reading.why }, 'provider callback ignored');
    return 'ignored';
  }
  if (reading.kind === 'hint') {
    const leg = await legByProviderId(s, providerName, reading.legId);
    if (!leg) return 'unknown_leg';
    try {
      // Nothing recorded here (still pending, or a scheduled check settled it a moment before): the
      // answer still waits for what is committed, so a read after it sees any settlement so far.
      const position = await checkNow(s, { ...leg, provider: providerName }, meta);
      await s.awaitReadModels(position ?? await s.store.head());
    } catch (err) {
      // The status could not be read or recorded now (the provider slow or failing, our store busy):
      // the hint still answers 2xx, since the leg's scheduled checks settle it all the same (CONTRACT §15).
      s.log.warn({ err, provider: providerName, reference: leg.reference }, 'a callback\'s status check failed; the scheduled checks go on');
    }
    return 'acted';
  }
  const cb = reading.callback;
  const row = (await s.knex('provider_legs').where({ reference: cb.reference, provider: providerName }).first('owner')) as { owner: string } | undefined;
  if (!row) return 'unknown_leg';
  const outcome = legOutcomeOf(cb.status);
  if (outcome) {
    const position = await legOwnerNamed(row.owner).settled(s, cb.reference, outcome, meta);
    await observeLegSettled(s, cb.reference, outcome, position);
    await s.awaitReadModels(position ?? await s.store.head()); // settled before by another path: its settlement
  }
  return 'acted';
}
