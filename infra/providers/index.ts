// Which adapters this service has: the sandbox always (CONTRACT §3), MTN MoMo and pawaPay when their
// credentials are configured (CONTRACT §15). Which one carries an operator's legs is the operator's
// routing (domain/operator-availability.ts), chosen through the operator API.
import type { Knex } from 'knex';
import type { Clock } from '../clock.ts';
import type { Secrets } from '../secrets.ts';
import type { ProviderSettings } from '../provider-config.ts';
import { SandboxProvider, SANDBOX } from './sandbox.ts';
import { MtnMomoProvider } from './mtn-momo/index.ts';
import { PawapayProvider } from './pawapay/index.ts';
import type { ProviderAdapter } from './types.ts';
import { PROVIDER_NAMES } from '../../domain/operator-routing.ts';


/** What the adapters are built from: the service's database, clock, secrets and settings. */
export interface ProviderDeps {
  knex: Knex;
  clock: Clock;
  secrets: Secrets;
  config: { sandboxSettleMs: number; providers: ProviderSettings };
}

export interface Providers {
  byName: Map<string, ProviderAdapter>;
  sandbox: SandboxProvider;
}

// One set of adapters per running app (tests run several in one process).
const built = new WeakMap<ProviderDeps, Providers>();

function build(s: ProviderDeps): Providers {
  const sandbox = new SandboxProvider(s.knex, s.clock, s.secrets, s.config.sandboxSettleMs);
  const byName = new Map<string, ProviderAdapter>([[SANDBOX, sandbox]]);
  const { mtnMomo, pawapay, timeoutMs, publicBaseUrl } = s.config.providers;
  // Token expiry and callback-key caches follow the service's clock (a test's manual clock too).
  const options = { timeoutMs, publicBaseUrl, now: () => s.clock.now().getTime() };
  if (mtnMomo) byName.set('mtn_momo', new MtnMomoProvider(mtnMomo, options));
  if (pawapay) byName.set('pawapay', new PawapayProvider(pawapay, options));
  return { byName, sandbox };
}

export function providers(s: ProviderDeps): Providers {
  let p = built.get(s);
  if (!p) built.set(s, (p = build(s)));
  return p;
}

export function adapter(s: ProviderDeps, name: string): ProviderAdapter {
  const a = providers(s).byName.get(name);
  if (!a) throw new Error(`no provider adapter ${name}`);
  return a;
}

/** For each provider name: whether it is configured here and carries the operator's legs. */
export function servingProviders(s: ProviderDeps, operatorCode: string): Record<string, boolean> {
  return Object.fromEntries(PROVIDER_NAMES.map((name) => [name, providers(s).byName.get(name)?.serves(operatorCode) ?? false]));
}
