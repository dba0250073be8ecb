// The real providers as the tests run them: the simulators of MTN MoMo's and pawaPay's APIs
// (test/simulators/) and the service's environment pointing at them (CONTRACT §15's variables).
import { startMtnMomoSimulator, type MtnCredentials, type MtnMomoSimulator, type MtnSimulatorOptions } from '../simulators/mtn-momo.ts';
import { PawapaySimulator, type SimulatorOptions } from '../simulators/pawapay.ts';
import type { TestApp } from './app.ts';

export interface MtnProductCredentials { collection: MtnCredentials; disbursement: MtnCredentials }

/** Credentials of no value but their shape: `n` tells apart the API users of several files. */
export function testMtnCredentials(n: number): MtnProductCredentials {
  const user = (i: number) => `a1b2c3d4-0000-4000-8000-${String(n * 10 + i).padStart(12, '0')}`;
  return {
    collection: { subscriptionKey: 'col-sub-key', apiUser: user(1), apiKey: 'col-api-key' },
    disbursement: { subscriptionKey: 'dis-sub-key', apiUser: user(2), apiKey: 'dis-api-key' },
  };
}

/** The service's environment for MTN (its sandbox environment, EUR) and pawaPay at these addresses. */
export function providerEnv(o: { mtnUrl: string; mtn: MtnProductCredentials; pawapayUrl: string; pawapayToken: string; timeoutMs: number }): Record<string, string> {
  return {
    MTN_MOMO_BASE_URL: o.mtnUrl, MTN_MOMO_TARGET_ENVIRONMENT: 'sandbox', MTN_MOMO_CURRENCY: 'EUR',
    MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: o.mtn.collection.subscriptionKey, MTN_MOMO_COLLECTION_API_USER: o.mtn.collection.apiUser,
    MTN_MOMO_COLLECTION_API_KEY: o.mtn.collection.apiKey,
    MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY: o.mtn.disbursement.subscriptionKey, MTN_MOMO_DISBURSEMENT_API_USER: o.mtn.disbursement.apiUser,
    MTN_MOMO_DISBURSEMENT_API_KEY: o.mtn.disbursement.apiKey,
    PAWAPAY_BASE_URL: o.pawapayUrl, PAWAPAY_API_TOKEN: o.pawapayToken,
    PROVIDER_TIMEOUT_MS: String(o.timeoutMs), PROVIDER_FIRST_CHECK_MS: '100',
  };
}

export interface SimulatedProviders {
  mtn: MtnMomoSimulator;
  pawapay: PawapaySimulator;
  /** The service's environment pointing at both. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Both simulators started, and the environment for them. */
export async function simulatedProviders(o: {
  n: number; timeoutMs?: number; mtn?: Partial<MtnSimulatorOptions>; pawapay?: Partial<SimulatorOptions>;
}): Promise<SimulatedProviders> {
  const creds = testMtnCredentials(o.n);
  const mtn = await startMtnMomoSimulator({ ...creds, targetEnvironment: 'sandbox', currency: 'EUR', ...o.mtn });
  const pawapay = await PawapaySimulator.start({ token: 'pawapay-token', ...o.pawapay });
  const env = providerEnv({ mtnUrl: mtn.url, mtn: creds, pawapayUrl: pawapay.baseUrl, pawapayToken: 'pawapay-token', timeoutMs: o.timeoutMs ?? 1000 });
  return { mtn, pawapay, env, close: async () => { await mtn.down(); await pawapay.close(); } };
}

/** Routes an operator to `providers` through the operator API; throws unless it answers 200. */
export async function setRouting(h: TestApp, code: string, providers: string[]): Promise<void> {
  const r = await h.admin('PUT', `/admin/operators/${code}/routing`, { providers });
  if (r.status !== 200) throw new Error(`routing ${code}: ${r.status} ${r.text}`);
}
