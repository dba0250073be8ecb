// Where and with what a merchant's webhooks are sent: its URL and sealed signing secret, read from
// the merchants read model through the process's MerchantRowCache (projections/merchant-row-cache.ts),
// which every process's projector clears after any merchant event (a URL set, a secret rotated), so
// a cached target is exactly as fresh as the read model it replaces. The recorder needs the URL (is
// a webhook configured?), each delivery attempt both: one read per merchant instead of one per attempt.
import type { Services } from '../../services.ts';

export interface WebhookTarget {
  url: string | null;
  /** The signing secret, sealed (infra/secrets.ts); decrypted per attempt, never cached in clear. */
  sealedSecret: string | null;
}

export async function webhookTargetOf(s: Services, merchantId: string): Promise<WebhookTarget | undefined> {
  const cached = s.webhookTargets.get(merchantId);
  if (cached) return cached;
  const generation = s.webhookTargets.generation();
  const row = (await s.knex('merchants').where({ id: merchantId }).first('webhook_url', 'webhook_secret_sealed')) as
    | { webhook_url: string | null; webhook_secret_sealed: string | null }
    | undefined;
  if (!row) return undefined;
  const target = { url: row.webhook_url, sealedSecret: row.webhook_secret_sealed };
  s.webhookTargets.set(merchantId, target, generation);
  return target;
}
