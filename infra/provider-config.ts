// The real providers' settings (CONTRACT §15), read once from the environment with the rest of the
// configuration (infra/config.ts). An adapter exists when every one of its credentials is set; a
// half-set provider is a configuration error, not a silently missing adapter.
import type { MtnMomoSettings, PawapaySettings } from './providers/types.ts';
import { staticRefusal } from './url-safety.ts';

export interface ProviderSettings {
  /** `PUBLIC_BASE_URL`: callbacks arrive under `{publicBaseUrl}/providers/…`; none are asked for without it. */
  publicBaseUrl: string | undefined;
  /** One provider call's time-out. */
  timeoutMs: number;
  /** A leg pending longer than this is listed by the reconciliation report. */
  pendingAlertSeconds: number;
  /** A real provider's first status check after a leg starts (CONTRACT §15: 5 s), doubling to 5 min. */
  firstCheckMs: number;
  mtnMomo: MtnMomoSettings | undefined;
  pawapay: PawapaySettings | undefined;
}

type Env = NodeJS.ProcessEnv;

/** The variables of one provider: all set (answered), none set (undefined), or some (an error naming the missing ones). */
function group(env: Env, names: string[], fail: (message: string) => Error): Record<string, string> | undefined {
  const set = names.filter((n) => (env[n] ?? '') !== '');
  if (set.length === 0) return undefined;
  const missing = names.filter((n) => !set.includes(n));
  if (missing.length > 0) throw fail(`${missing.join(', ')} must be set with ${set.join(', ')}`);
  return Object.fromEntries(names.map((n) => [n, env[n]!]));
}

function httpUrl(raw: string, name: string, fail: (message: string) => Error): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw fail(`${name} must be a URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw fail(`${name} must be an http(s) URL`);
  return raw.replace(/\/+$/, '');
}

/** Where providers call back: https and a public host (CONTRACT §15), unless ALLOW_PRIVATE_URLS (a local trial). */
function publicUrl(raw: string, allowPrivate: boolean, fail: (message: string) => Error): string {
  const refusal = staticRefusal(raw, { allowPrivate, schemes: ['https:'] });
  if (refusal) throw fail(`PUBLIC_BASE_URL: ${refusal} (http and private hosts only with ALLOW_PRIVATE_URLS=true)`);
  return httpUrl(raw, 'PUBLIC_BASE_URL', fail);
}

const product = (env: Record<string, string>, p: 'COLLECTION' | 'DISBURSEMENT') => ({
  subscriptionKey: env[`MTN_MOMO_${p}_SUBSCRIPTION_KEY`]!, apiUser: env[`MTN_MOMO_${p}_API_USER`]!, apiKey: env[`MTN_MOMO_${p}_API_KEY`]!,
});

export function providerSettings(
  env: Env, numbers: { timeoutMs: number; pendingAlertSeconds: number; firstCheckMs: number; allowPrivateUrls: boolean }, fail: (message: string) => Error,
): ProviderSettings {
  const mtn = group(env, ['MTN_MOMO_BASE_URL', 'MTN_MOMO_TARGET_ENVIRONMENT', 'MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY', 'MTN_MOMO_COLLECTION_API_USER',
    'MTN_MOMO_COLLECTION_API_KEY', 'MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY', 'MTN_MOMO_DISBURSEMENT_API_USER', 'MTN_MOMO_DISBURSEMENT_API_KEY'], fail);
  const pawapay = group(env, ['PAWAPAY_BASE_URL', 'PAWAPAY_API_TOKEN'], fail);
  const publicBaseUrl = env.PUBLIC_BASE_URL ? publicUrl(env.PUBLIC_BASE_URL, numbers.allowPrivateUrls, fail) : undefined;
  const { allowPrivateUrls: _, ...rest } = numbers;
  return {
    publicBaseUrl, ...rest,
    mtnMomo: mtn && {
      baseUrl: httpUrl(mtn.MTN_MOMO_BASE_URL!, 'MTN_MOMO_BASE_URL', fail), targetEnvironment: mtn.MTN_MOMO_TARGET_ENVIRONMENT!,
      collection: product(mtn, 'COLLECTION'), disbursement: product(mtn, 'DISBURSEMENT'), currencyOverride: env.MTN_MOMO_CURRENCY || undefined,
    },
    pawapay: pawapay && { baseUrl: httpUrl(pawapay.PAWAPAY_BASE_URL!, 'PAWAPAY_BASE_URL', fail), apiToken: pawapay.PAWAPAY_API_TOKEN! },
  };
}
