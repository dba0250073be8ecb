// What an API key may do (CONTRACT §18): `*` (everything) or a list of `<resource>:read` and
// `<resource>:write`, where `write` includes `read`. A key created before scopes existed has none in
// its event and may do everything, as it always could.
import type { ErrorDetail } from './errors.ts';

export const SCOPE_RESOURCES = [
  'customers', 'quotes', 'payins', 'payouts', 'transfers', 'refunds', 'payment_links', 'wallets', 'events', 'webhooks',
] as const;

export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export type Scope = `${ScopeResource}:${'read' | 'write'}`;
/** What a key may hold: everything, or some scopes. */
export type KeyScope = '*' | Scope;

export const ALL_SCOPES: Scope[] = SCOPE_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as Scope[]);
export const EVERYTHING: KeyScope[] = ['*'];

const isScope = (s: string): s is Scope => (ALL_SCOPES as string[]).includes(s);

/** Problems with a requested list, each naming its entry (`scopes[2]`); none when it can be normalised. */
export function scopeProblems(requested: readonly string[]): ErrorDetail[] {
  if (requested.length === 0) return [{ field: 'scopes', message: 'must name at least one scope, or be ["*"]' }];
  const problems: ErrorDetail[] = [];
  requested.forEach((s, i) => {
    if (s === '*') {
      if (requested.some((other) => other !== '*')) problems.push({ field: `scopes[${i}]`, message: '"*" stands alone: it already grants every scope' });
    } else if (!isScope(s)) {
      problems.push({ field: `scopes[${i}]`, message: `unknown scope "${s}": expected <resource>:read or <resource>:write, resource one of ${SCOPE_RESOURCES.join(', ')}` });
    }
  });
  return problems;
}

/**
 * One form for one set of rights: duplicates gone, a `read` beside its resource's `write` gone
 * (write includes it), in the order of SCOPE_RESOURCES. Call on a list without scopeProblems.
 */
export function normaliseScopes(requested: readonly string[]): KeyScope[] {
  if (requested.includes('*')) return [...EVERYTHING];
  const held = new Set(requested);
  return ALL_SCOPES.filter((s) => held.has(s) && !(s.endsWith(':read') && held.has(s.replace(/:read$/, ':write'))));
}

/** Whether a key holding `held` may do what `needed` names. */
export function grants(held: readonly string[], needed: Scope): boolean {
  if (held.includes('*') || held.includes(needed)) return true;
  return needed.endsWith(':read') && held.includes(needed.replace(/:read$/, ':write'));
}
