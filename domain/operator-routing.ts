// Which providers carry an operator's legs, in order (CONTRACT §15): the operator API sets it on the
// operator's stream, beside its availability (domain/operator-availability.ts folds both). A new
// leg starts at the first provider and moves to the next only when that one certainly did not take
// it; a leg stays with the provider that took it. Which providers are configured, and which serve
// the operator, is a fact of the running service: it arrives in the command.
import { refuse } from './errors.ts';

/** Who changed an operator's availability or routing: the operator API's caller (its credential's fingerprint, never the credential). */
export interface ChangedBy {
  actor: 'operator';
  credential: string;
  request_id: string | null;
}

/** Every provider a routing may name (the sandbox, CONTRACT §3, and the real ones, §15). */
export const PROVIDER_NAMES = ['sandbox', 'mtn_momo', 'pawapay'] as const;
export const DEFAULT_ROUTING: readonly string[] = ['sandbox'];
const MAX_PROVIDERS = 3;

export interface SetRouting {
  operatorCode: string;
  /** As the operator API received it: checked here. */
  providers: unknown;
  /** For each provider name: configured in this service and serving the operator. */
  serving: Readonly<Record<string, boolean>>;
  changedBy: ChangedBy;
  at: string;
}

export interface RoutingSet {
  operator_code: string;
  providers: string[];
  previous: string[];
  changed_by: ChangedBy;
  at: string;
}

/** The routing asked for, checked: 1 to 3 known names, no repeats (400), each serving the operator (400 provider_unavailable). */
export function checkedRouting(c: SetRouting): string[] {
  const p = c.providers;
  const bad = (message: string) => refuse('bad_request', message, [{ field: 'providers', message }]);
  if (!Array.isArray(p) || p.length === 0 || p.length > MAX_PROVIDERS) bad(`providers must list 1 to ${MAX_PROVIDERS} providers`);
  const names = p as unknown[];
  for (const name of names) {
    if (typeof name !== 'string' || !(PROVIDER_NAMES as readonly string[]).includes(name)) bad(`unknown provider ${String(name)}: one of ${PROVIDER_NAMES.join(', ')}`);
  }
  if (new Set(names).size !== names.length) bad('a provider is listed twice');
  for (const name of names as string[]) {
    if (!c.serving[name]) {
      refuse('provider_unavailable', `${name} is not configured here or does not serve ${c.operatorCode}`, [{ field: 'providers', message: `${name} cannot carry ${c.operatorCode}` }]);
    }
  }
  return names as string[];
}
