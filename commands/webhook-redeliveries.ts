// Webhook delivery jobs (the scheduler's `webhook.delivery` kind, run by workers/webhooks): how they
// are named, what they carry, and the merchant's request for one more attempt now
// (POST /events/{id}/redeliver, the dashboard's "Redeliver").
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import { endpointsOf } from './webhook-endpoints.ts';
import { acceptsEvent } from '../domain/webhook-endpoints.ts';

export const JOB_KIND = 'webhook.delivery';
export const autoJobKey = (eventId: string) => `auto:${eventId}`;
export const manualJobKey = (eventId: string, endpointId: string, nonce: string) => `manual:${eventId}:${endpointId}:${nonce}`;

export interface DeliveryJob {
  eventId: string;
  merchantId: string;
  /** The endpoint (CONTRACT.md §11); absent on jobs queued before endpoints: the merchant's first (id = merchant id). */
  endpointId?: string;
  trigger: 'scheduled' | 'manual';
}

/**
 * Asks for one extra attempt now (POST /events/{id}/redeliver) at every enabled endpoint whose filter
 * takes the event (endpoints as they are now); answers how many. `requestId` names the request (the
 * dashboard passes its form's claim id, so a retried claim schedules nothing more).
 */
export async function requestRedelivery(s: Services, event: { id: string; event: string }, merchantId: string, requestId: string = randomUUID()): Promise<number> {
  const targets = (await endpointsOf(s, merchantId)).filter((e) => e.status === 'enabled' && acceptsEvent(e, event.event));
  for (const e of targets) {
    const job: DeliveryJob = { eventId: event.id, merchantId, endpointId: e.id, trigger: 'manual' };
    await s.scheduler.schedule(JOB_KIND, manualJobKey(event.id, e.id, requestId), job, s.clock.now());
  }
  return targets.length;
}
