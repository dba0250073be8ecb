// Where and with what a merchant's webhooks are sent: its endpoints (CONTRACT.md §11, one stream per
// merchant) or, for a merchant that has never touched them, its URL and sealed signing secret from the
// merchant's own stream (the aggregate's cached state and a read of the stream's tail: one indexed
// query that finds nothing new almost every time). Never behind any committed event, so neither the
// recorder ("is a webhook configured?") nor an attempt waits for the read models to catch up: the
// recorder's wait for them was most of a transfer's webhook latency (bench issue 8: transfer-e2e
// p99 ~190 ms with it, ~100 ms without). A URL set or a secret rotated is used by the next attempt.
import type { Services } from '../../commands/services.ts';
import { merchantDecider, type MerchantState } from '../../domain/merchant.ts';
import { streams } from '../../commands/streams.ts';
import { endpointsDecider, type EndpointsState, type WebhookEndpoint } from '../../domain/webhook-endpoints.ts';
import { endpointsOf, legacyEndpointOf } from '../../commands/webhook-endpoints.ts';

export interface WebhookTarget {
  url: string | null;
  /** The signing secret, sealed (infra/secrets.ts); decrypted per attempt, never kept in clear. */
  sealedSecret: string | null;
}

const targetOf = (state: MerchantState): WebhookTarget | undefined =>
  (state.exists ? { url: state.webhookUrl, sealedSecret: state.webhookSecretSealed } : undefined);

/** As the merchant's stream is now (a delivery attempt). */
export async function webhookTargetOf(s: Services, merchantId: string): Promise<WebhookTarget | undefined> {
  return targetOf((await s.aggregates.load(streams.merchant(merchantId), merchantDecider)).state);
}

/**
 * As the merchant's stream was at `position` or later (the recorder: the target as of the event it
 * records). Once this process has read the global order past the position, a cached state as new as
 * the newest merchant event read includes every merchant event up to it (seen-versions.ts): no read
 * (bench issue 8: the read was one statement per payin). Otherwise, as now.
 */
export async function webhookTargetAsOf(s: Services, merchantId: string, position: bigint): Promise<WebhookTarget | undefined> {
  const streamId = streams.merchant(merchantId);
  if (s.merchantVersions.position >= position) {
    const cached = s.aggregates.cachedAtLeast<MerchantState>(streamId, s.merchantVersions.latest(streamId));
    if (cached) return targetOf(cached.state);
  }
  return webhookTargetOf(s, merchantId);
}

/**
 * The merchant's endpoints for an event being recorded: its endpoints stream as it is now, or, for
 * a merchant that has never touched its endpoints, its URL from before endpoints as of the event.
 */
export async function endpointsAsOf(s: Services, merchantId: string, position: bigint): Promise<WebhookEndpoint[]> {
  const state = endpointsCachedAsOf(s, merchantId, position) ?? await loadEndpoints(s, merchantId);
  if (state.started) return state.endpoints;
  const legacy = await webhookTargetAsOf(s, merchantId, position);
  const endpoint = legacy && legacyEndpointOf(merchantId, legacy.url, legacy.sealedSecret, '');
  return endpoint ? [endpoint] : [];
}

/**
 * The merchant's endpoints as of `position` from the cache alone, as webhookTargetAsOf does for its
 * URL (the endpoints streams are watched too): a cached state, even an empty stream's, at least as
 * new as the newest endpoints event read in the global order includes every one up to `position`.
 * Without it, every recorded event was one more read of the endpoints stream's tail.
 */
function endpointsCachedAsOf(s: Services, merchantId: string, position: bigint): EndpointsState | undefined {
  if (s.merchantVersions.position < position) return undefined;
  const streamId = streams.webhookEndpoints(merchantId);
  return s.aggregates.cachedAsOf<EndpointsState>(streamId, s.merchantVersions.latest(streamId))?.state;
}

/** The endpoints stream as it is now; one that does not exist yet is remembered empty (the cache moves on with any later append). */
async function loadEndpoints(s: Services, merchantId: string): Promise<EndpointsState> {
  const streamId = streams.webhookEndpoints(merchantId);
  const loaded = await s.aggregates.load(streamId, endpointsDecider);
  if (loaded.version === 0) s.aggregates.assumeNew(streamId, endpointsDecider);
  return loaded.state;
}

/** One endpoint as it is now (an attempt): undefined once deleted. */
export async function endpointNow(s: Services, merchantId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
  return (await endpointsOf(s, merchantId)).find((e) => e.id === endpointId);
}
