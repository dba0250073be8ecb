// The provider gateway: the one worker that talks to mobile-money operators.
//
//   bus `events.<trigger>` ──► startLeg (commands/leg-initiation.ts): the operator's routing, failover
//                              only when a provider certainly did not take the leg, then a durable
//                              `provider-check` job (key = reference)
//   job `provider-check` ──► checkLeg (commands/leg-checks.ts): the status at the provider that has
//                              the leg; pending: again later (back-off, capped, never dropped);
//                              completed | failed: the owner settles it
//   POST /provider-callbacks/sandbox, /providers/{mtn_momo,pawapay}/callbacks: commands/leg-callbacks.ts
//
// Every step is idempotent, so a redelivered trigger, a re-run job or a replayed callback never
// initiates twice or moves money twice: the provider dedupes by reference, the owner's decisions
// decide nothing once the leg has settled, the job is keyed by reference.
//
// Plugging in another leg owner: implement LegOwner (commands/legs.ts) and add it to
// commands/leg-owners.ts. A command may also call `startLeg` directly (and try again later when it
// throws ProviderBusy or StartHeldElsewhere, as this worker does).
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import type { Job } from '../infra/scheduler.ts';
import { otpVault } from '../infra/otp-vault.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import { legOwners } from '../commands/leg-owners.ts';
import { neverGiveUp } from './never-give-up.ts';
import type { LegRequest } from '../commands/legs.ts';
import { CHECK_JOB, GATEWAY_CONSUMERS, ProviderBusy, StartHeldElsewhere, startLeg, type CheckPayload } from '../commands/leg-initiation.ts';
import { GATEWAY, checkLeg } from '../commands/leg-checks.ts';

const PURGE_EVERY_MS = 60_000;
/** A start that found its provider busy (or its leg held by another start) is tried again after this. */
const BUSY_RETRY_MS = 500;

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
      concurrency: GATEWAY_CONSUMERS,
      handler: async (msg) => {
        const e = msg.data as ForwardedEvent;
        const leg = triggers.get(e.type)?.(e);
        if (!leg) return;
        try {
          await startLeg(s, leg, { actor: GATEWAY, causationId: e.id, correlationId: e.stream_id });
        } catch (err) {
          // Not a failure: the provider's starts are all in flight here, or another process is starting this leg.
          if (err instanceof ProviderBusy || err instanceof StartHeldElsewhere) return { retryAfterMs: BUSY_RETRY_MS };
          throw err;
        }
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
