// What a dashboard user may change, through the very command handlers the operator and merchant
// APIs use (commands/merchants.ts, the webhook delivery jobs), so the events, their metadata and the
// audit are the same whoever acted. The actor recorded is `dashboard:<user id>`.
import type { UUID } from 'node:crypto';
import type { ApiServices } from '../api/services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import * as C from '../commands/merchants.ts';
import type { MessageKey } from '../i18n/catalogue.ts';
import { Refusal } from './refusal.ts';
import { checkUrl, UnsafeUrlError } from '../infra/url-safety.ts';
import { webhookUrlPolicy } from '../infra/url-safety.ts';
import { requestRedelivery } from '../commands/webhook-redeliveries.ts';
import { configureFirstEndpoint, rotateFirstEndpointSecret } from '../commands/webhook-endpoints.ts';
import { sendTestWebhook } from '../commands/webhook-tests.ts';
import { keyView } from '../api/routes/admin-merchants.ts';
import type { Session } from './session.ts';
import { webhookUrlOf } from './data.ts';

export const meta = (session: Session, requestId: string): EventMetadata => ({ requestId, actor: `dashboard:${session.userId}` });

/** When a rotated key's old secret stops, as the keys page offers it (the label: a catalogue key). */
export const GRACE_CHOICES: Array<{ seconds: number; label: MessageKey }> = [
  { seconds: 0, label: 'dash.keys.grace_0' },
  { seconds: 3600, label: 'dash.keys.grace_3600' },
  { seconds: 86_400, label: 'dash.keys.grace_86400' },
  { seconds: 604_800, label: 'dash.keys.grace_604800' },
];

export const EXPIRY_CHOICES: Array<{ days: number; label: MessageKey }> = [
  { days: 0, label: 'dash.keys.expiry_0' },
  { days: 30, label: 'dash.keys.expiry_30' },
  { days: 90, label: 'dash.keys.expiry_90' },
  { days: 365, label: 'dash.keys.expiry_365' },
];

/** `scopes` as the form built them (dashboard/key-scopes.ts); the decider checks them again. */
export async function createKey(s: ApiServices, session: Session, requestId: string, expiresInDays: number, scopes: readonly string[]) {
  const expiresAt = expiresInDays > 0 ? new Date(s.clock.now().getTime() + expiresInDays * 86_400_000).toISOString() : null;
  const { key, apiSecret } = await C.createApiKey(s, session.merchantId, expiresAt, scopes, meta(session, requestId));
  return { key: keyView(key, s.clock.now()), apiSecret };
}

export async function rotateKey(s: ApiServices, session: Session, requestId: string, keyId: string, graceSeconds: number) {
  const { key, apiSecret } = await C.rotateApiKey(s, session.merchantId, keyId, graceSeconds, meta(session, requestId));
  return { key: keyView(key, s.clock.now()), apiSecret };
}

export async function revokeKey(s: ApiServices, session: Session, requestId: string, keyId: string) {
  await C.revokeApiKey(s, session.merchantId, keyId, meta(session, requestId));
}

/** The operator API's rules: checkUrl under the delivery's own policy (https, public addresses only). */
export async function setWebhookUrl(s: ApiServices, session: Session, requestId: string, url: string) {
  try {
    await checkUrl(url, webhookUrlPolicy(s));
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw new Refusal('dash.error.url_refused', { reason: err.message }, 'bad_request', [{ field: 'url', message: err.message }]);
    throw err;
  }
  // The merchant's first endpoint (CONTRACT.md §11), as the operator's PUT sets it.
  return configureFirstEndpoint(s, session.merchantId, url, meta(session, requestId));
}

async function configuredUrl(s: ApiServices, merchantId: string): Promise<string> {
  const url = await webhookUrlOf(s, merchantId);
  if (!url) throw new Refusal('dash.error.webhook_url_first');
  return url;
}

export async function rotateWebhookSecret(s: ApiServices, session: Session, requestId: string) {
  return rotateFirstEndpointSecret(s, session.merchantId, meta(session, requestId));
}

/** `testId`: the form's claim id (form-once.ts), so a claim taken over after a crash sends no second test. */
export async function sendTestEvent(s: ApiServices, session: Session, requestId: string, testId: UUID): Promise<string> {
  await configuredUrl(s, session.merchantId);
  return sendTestWebhook(s, session.merchantId, meta(session, requestId), testId);
}

/** POST /events/{id}/redeliver's effect: one extra attempt now at each enabled endpoint that takes it (the caller checked the event is the merchant's). */
export async function redeliver(s: ApiServices, session: Session, event: { id: string; event: string }, redeliveryId: string) {
  const sent = await requestRedelivery(s, event, session.merchantId, redeliveryId);
  if (sent === 0) throw new Refusal('dash.error.no_endpoint_takes');
}
