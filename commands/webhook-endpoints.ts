// A merchant's webhook endpoints (CONTRACT.md §11, domain/webhook-endpoints.ts): the merchant API's
// and the dashboard's commands, the operator's PUT /admin/merchants/{id}/webhook (the first endpoint),
// the worker's disabling (410, 72 hours of failures), and the endpoints as deliveries see them.
//
// Every command runs on the endpoints stream and reads the merchant stream: a merchant whose URL was
// configured before endpoints existed has it adopted as its first endpoint (id = merchant id) in the
// same append, which commits only if the merchant stream is still as read.
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import { DomainError } from '../domain/errors.ts';
import * as M from '../domain/merchant.ts';
import * as W from '../domain/webhook-endpoints.ts';
import { randomToken } from '../infra/secrets.ts';
import { checkUrl, UnsafeUrlError, webhookUrlPolicy, type Resolver } from '../infra/url-safety.ts';
import { streams } from './streams.ts';
import { toNew } from './aggregates.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';

/** The default staging window of a rotation: a day to add the new secret to the receiver. */
export const DEFAULT_ACTIVATE_AFTER_SECONDS = 86_400;

const newSecret = () => randomToken('whsec_', 32);

/** CONTRACT §1's URL rules, as the operator's webhook URL is checked: a refusal is a 400 naming `url`. */
export async function checkedWebhookUrl(s: { config: { allowPrivateUrls: boolean }; resolver: Resolver }, raw: string): Promise<string> {
  try {
    await checkUrl(raw, webhookUrlPolicy(s));
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw new DomainError('bad_request', `Webhook URL refused: ${err.message}`, [{ field: 'url', message: err.message }]);
    throw err;
  }
  return raw;
}

const now = (s: Services) => s.clock.now().toISOString();

/** A merchant's pre-endpoint URL and secret seen as its one endpoint (id: the merchant id, every event). */
export function legacyEndpointOf(merchantId: string, url: string | null, sealedSecret: string | null, at: string): W.WebhookEndpoint | undefined {
  if (!url || !sealedSecret) return undefined;
  return {
    id: merchantId, url, enabledEvents: [W.ALL_EVENTS], description: null, status: 'enabled',
    secretSealed: sealedSecret, nextSecret: null, createdAt: at, updatedAt: at,
  };
}

const legacyEndpoint = (m: M.MerchantState) => (m.exists ? legacyEndpointOf(m.id, m.webhookUrl, m.webhookSecretSealed, m.createdAt) : undefined);

/** The merchant's endpoints as they stand (the stream's tail read: never behind a committed event). */
export async function endpointsOf(s: Services, merchantId: string): Promise<W.WebhookEndpoint[]> {
  // Both streams at once: their tail reads go out as one statement (the event store batches the reads
  // of a turn), where one after the other was two round trips before every webhook attempt (issue 44).
  // The merchant's is needed only while the endpoints' stream has not started (its legacy URL).
  const [endpoints, merchant] = await Promise.all([
    s.aggregates.load(streams.webhookEndpoints(merchantId), W.endpointsDecider),
    s.aggregates.load(streams.merchant(merchantId), M.merchantDecider),
  ]);
  if (endpoints.state.started) return endpoints.state.endpoints;
  const legacy = legacyEndpoint(merchant.state);
  return legacy ? [legacy] : [];
}

/**
 * Decides `command` on the merchant's endpoints (after adopting its legacy URL when the stream is
 * new) and appends; answers the endpoints after it and whether anything was appended.
 */
async function onEndpoints(
  s: Services, merchantId: string, command: (at: string) => W.EndpointCommand, meta: EventMetadata,
): Promise<{ state: W.EndpointsState; changed: boolean }> {
  const streamId = streams.webhookEndpoints(merchantId);
  const { result, append } = await s.aggregates.transact([streamId], async (tx) => {
    const merchant = (await tx.read(streams.merchant(merchantId), M.merchantDecider)).state;
    M.requireMerchant(merchant);
    const loaded = await tx.load(streamId, W.endpointsDecider);
    const at = now(s);
    const legacy = loaded.state.started ? undefined : legacyEndpoint(merchant);
    const adopt: W.EndpointEvent[] = legacy
      ? W.endpointsDecider.decide({ type: 'Adopt', data: { endpointId: legacy.id, url: legacy.url, sealedSecret: legacy.secretSealed, at } }, loaded.state)
      : [];
    const adopted = adopt.reduce(W.endpointsDecider.evolve, loaded.state);
    const decided = W.endpointsDecider.decide(command(at), adopted);
    const events = decided.length > 0 ? [...adopt, ...decided] : [];
    const state = events.reduce(W.endpointsDecider.evolve, loaded.state);
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: { state, changed: events.length > 0 } };
  });
  await s.awaitReadModels(append?.position);
  return result;
}

export interface NewEndpoint { url: string; enabledEvents: string[]; description: string | null }

/** A new endpoint with its signing secret (answered once; null when an earlier attempt under the same id created it). */
export async function createEndpoint(s: Services, merchantId: string, endpointId: string, e: NewEndpoint, meta: EventMetadata) {
  const secret = newSecret();
  const { state, changed } = await onEndpoints(s, merchantId, (at) => ({
    type: 'CreateEndpoint', data: { endpointId, ...e, sealedSecret: s.secrets.encrypt(secret), at },
  }), meta);
  return { endpoint: W.endpointIn(state, endpointId), signingSecret: changed ? secret : null, existed: !changed };
}

export async function updateEndpoint(s: Services, merchantId: string, u: Omit<W.UpdateEndpoint, 'at'>, meta: EventMetadata) {
  const { state } = await onEndpoints(s, merchantId, (at) => ({ type: 'UpdateEndpoint', data: { ...u, at } }), meta);
  // Enabled again: its failures so far no longer count towards the 72 hours.
  if (u.status === 'enabled') await s.knex('webhook_endpoint_failures').where({ endpoint_id: u.endpointId }).delete();
  return W.endpointIn(state, u.endpointId);
}

export async function deleteEndpoint(s: Services, merchantId: string, endpointId: string, meta: EventMetadata): Promise<void> {
  await onEndpoints(s, merchantId, (at) => ({ type: 'DeleteEndpoint', data: { endpointId, at } }), meta);
}

/** A new secret that signs from `activateAfterSeconds` on (0: at once); the current one signs until then. */
export async function rotateEndpointSecret(s: Services, merchantId: string, endpointId: string, activateAfterSeconds: number, meta: EventMetadata) {
  const secret = newSecret();
  let activatesAt = '';
  await onEndpoints(s, merchantId, (at) => {
    activatesAt = new Date(Date.parse(at) + activateAfterSeconds * 1000).toISOString();
    return { type: 'RotateSecret', data: { endpointId, sealedSecret: s.secrets.encrypt(secret), activatesAt, at } };
  }, meta);
  return { signingSecret: secret, activatesAt };
}

/** The worker's decision: the endpoint answered 410, or its attempts have all failed for 72 hours. */
export async function disableEndpoint(s: Services, merchantId: string, endpointId: string, reason: W.StatusReason): Promise<boolean> {
  const { changed } = await onEndpoints(s, merchantId, (at) => ({ type: 'DisableEndpoint', data: { endpointId, reason, at } }), { actor: 'webhooks' });
  await s.knex('webhook_endpoint_failures').where({ endpoint_id: endpointId }).delete();
  return changed;
}

/**
 * The operator's PUT /admin/merchants/{id}/webhook: the merchant stream keeps the URL the operator
 * set (its read model shows it), and the first endpoint takes it with the same new secret, at once
 * (created for every event when there is none). A merchant without endpoint events has the merchant
 * stream's URL as its endpoint: nothing more to write.
 */
export async function configureFirstEndpoint(s: Services, merchantId: string, url: string, meta: EventMetadata) {
  const secret = newSecret();
  const sealed = s.secrets.encrypt(secret);
  const merchantStream = streams.merchant(merchantId);
  const endpointsStream = streams.webhookEndpoints(merchantId);
  const { append } = await s.aggregates.transact([merchantStream, endpointsStream], async (tx) => {
    const at = now(s);
    const m = await tx.load(merchantStream, M.merchantDecider);
    const mEvents = M.merchantDecider.decide({ type: 'ConfigureWebhook', data: { url, sealedSecret: sealed, at } }, m.state);
    const e = await tx.read(endpointsStream, W.endpointsDecider);
    const eEvents = e.state.started
      ? W.endpointsDecider.decide({ type: 'ConfigureFirst', data: { endpointId: randomUUID(), url, enabledEvents: [W.ALL_EVENTS], description: null, sealedSecret: sealed, at } }, e.state)
      : [];
    const appends = [{ streamId: merchantStream, expectedVersion: m.version, events: toNew(mEvents, meta) }];
    if (eEvents.length > 0) appends.push({ streamId: endpointsStream, expectedVersion: e.version, events: toNew(eEvents, meta) });
    return { appends, result: undefined };
  });
  await s.awaitReadModels(append?.position);
  return { url, signingSecret: secret };
}

/**
 * The operator's (and the dashboard's) rotate-secret: a new secret for the first endpoint, at once
 * (400 when there is none). A merchant without endpoint events rotates its URL's secret on its own
 * stream, as before endpoints (that URL is its endpoint). One append decided on both streams: the
 * merchant-stream rotation commits only if the endpoints stream is still empty, so a concurrent
 * adoption of the URL (which copies the secret then in force) makes it decide again, on the adopted
 * endpoint: the secret answered is always the one that signs.
 */
export async function rotateFirstEndpointSecret(s: Services, merchantId: string, meta: EventMetadata) {
  const secret = newSecret();
  const sealed = s.secrets.encrypt(secret);
  const merchantStream = streams.merchant(merchantId);
  const endpointsStream = streams.webhookEndpoints(merchantId);
  const { result, append } = await s.aggregates.transact([merchantStream, endpointsStream], async (tx) => {
    const at = now(s);
    const e = await tx.read(endpointsStream, W.endpointsDecider);
    if (!e.state.started) {
      const m = await tx.load(merchantStream, M.merchantDecider);
      const events = M.merchantDecider.decide({ type: 'RotateWebhookSecret', data: { sealedSecret: sealed, at } }, m.state);
      const state = events.reduce(M.merchantDecider.evolve, m.state);
      return { appends: [{ streamId: merchantStream, expectedVersion: m.version, events: toNew(events, meta) }], result: state.webhookUrl! };
    }
    const events = W.endpointsDecider.decide({ type: 'RotateFirst', data: { sealedSecret: sealed, at } }, e.state);
    return { appends: [{ streamId: endpointsStream, expectedVersion: e.version, events: toNew(events, meta) }], result: e.state.endpoints[0]!.url };
  });
  await s.awaitReadModels(append?.position);
  return { url: result, signingSecret: secret };
}
