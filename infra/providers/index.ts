// Which adapter serves an operator. Every sandbox operator is served by the sandbox provider; a real
// integration registers its adapter here and claims its operators in `providerNameFor`.
import type { Services } from '../../commands/services.ts';
import { SandboxProvider, SANDBOX } from './sandbox.ts';
import type { ProviderAdapter } from './types.ts';

export interface Providers {
  byName: Map<string, ProviderAdapter>;
  sandbox: SandboxProvider;
}

// One set of adapters per running app (tests run several in one process).
const built = new WeakMap<Services, Providers>();

export function providers(s: Services): Providers {
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

export function adapter(s: Services, name: string): ProviderAdapter {
  const a = providers(s).byName.get(name);
  if (!a) throw new Error(`no provider adapter ${name}`);
  return a;
}
