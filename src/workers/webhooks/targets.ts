// Where and with what a merchant's webhooks are sent: its URL and sealed signing secret, from the
// merchant's own stream (the aggregate's cached state and a read of the stream's tail: one indexed
// query that finds nothing new almost every time). Never behind any committed event, so neither the
// recorder ("is a webhook configured?") nor an attempt waits for the read models to catch up: the
// recorder's wait for them was most of a transfer's webhook latency (bench issue 8: transfer-e2e
// p99 ~190 ms with it, ~100 ms without). A URL set or a secret rotated is used by the next attempt.
import type { Services } from '../../services.ts';
import { merchantDecider } from '../../domain/merchant.ts';
import { streams } from '../../commands/streams.ts';

export interface WebhookTarget {
  url: string | null;
  /** The signing secret, sealed (infra/secrets.ts); decrypted per attempt, never kept in clear. */
  sealedSecret: string | null;
}

export async function webhookTargetOf(s: Services, merchantId: string): Promise<WebhookTarget | undefined> {
  const { state } = await s.aggregates.load(streams.merchant(merchantId), merchantDecider);
  if (!state.exists) return undefined;
  return { url: state.webhookUrl, sealedSecret: state.webhookSecretSealed };
}
