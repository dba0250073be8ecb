// Webhook delivery jobs (the scheduler's `webhook.delivery` kind, run by workers/webhooks): how they
// are named, what they carry, and the merchant's request for one more attempt now
// (POST /events/{id}/redeliver, the dashboard's "Redeliver").
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';

export const JOB_KIND = 'webhook.delivery';
export const autoJobKey = (eventId: string) => `auto:${eventId}`;
export const manualJobKey = (eventId: string, nonce: string) => `manual:${eventId}:${nonce}`;

export interface DeliveryJob {
  eventId: string;
  merchantId: string;
  trigger: 'scheduled' | 'manual';
}

/** Asks for one extra attempt now (POST /events/{id}/redeliver). */
/** `requestId` names the request (the dashboard passes its form's claim id, so a retried claim schedules nothing more). */
export async function requestRedelivery(s: Services, eventId: string, merchantId: string, requestId: string = randomUUID()): Promise<void> {
  const job: DeliveryJob = { eventId, merchantId, trigger: 'manual' };
  await s.scheduler.schedule(JOB_KIND, manualJobKey(eventId, requestId), job, s.clock.now());
}
