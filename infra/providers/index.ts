// Which adapter serves an operator. Every sandbox operator is served by the sandbox provider; a real
// integration registers its adapter here and claims its operators in `providerNameFor`.
import type { Knex } from 'knex';
import type { Clock } from '../clock.ts';
import type { Secrets } from '../secrets.ts';
import { SandboxProvider, SANDBOX } from './sandbox.ts';
import type { ProviderAdapter } from './types.ts';

/** What the adapters are built from: the service's database, clock, secrets and settings. */
export interface ProviderDeps {
  knex: Knex;
  clock: Clock;
  secrets: Secrets;
  config: { sandboxSettleMs: number };
}

export interface Providers {
  byName: Map<string, ProviderAdapter>;
  sandbox: SandboxProvider;
}

// One set of adapters per running app (tests run several in one process).
const built = new WeakMap<ProviderDeps, Providers>();

export function providers(s: ProviderDeps): Providers {
  let p = built.get(s);
  if (!p) {
    const sandbox = new SandboxProvider(s.knex, s.clock, s.secrets, s.config.sandboxSettleMs);
    p = { byName: new Map<string, ProviderAdapter>([[SANDBOX, sandbox]]), sandbox };
    built.set(s, p);
  }
  return p;
}

export function providerNameFor(_operatorCode: string): string {
  return SANDBOX;
}

export function adapter(s: ProviderDeps, name: string): ProviderAdapter {
  const a = providers(s).byName.get(name);
  if (!a) throw new Error(`no provider adapter ${name}`);
  return a;
}
