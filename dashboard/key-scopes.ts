// The create-key form's access choice as API key scopes (CONTRACT §18): every resource (["*"]),
// read-only (each resource's `read`), or per resource none, read, or read and write. A choice not
// on the form is refused; the decider checks the list again (domain/api-key-scopes.ts).
import type { Request } from 'express';
import { EVERYTHING, SCOPE_RESOURCES, type KeyScope, type ScopeResource } from '../domain/api-key-scopes.ts';
import type { MessageKey } from '../i18n/catalogue.ts';
import { Refusal } from './refusal.ts';
import { field } from './http.ts';

export const ACCESS_CHOICES = ['all', 'read_only', 'custom'] as const;
/** Per resource in a custom choice: no access, `read`, or `write` (which includes read). */
export const LEVEL_CHOICES = ['none', 'read', 'write'] as const;

/** The form field of a resource's level in a custom choice. */
export const levelField = (r: ScopeResource) => `scope_${r}`;

export const RESOURCE_LABELS: Record<ScopeResource, MessageKey> = {
  customers: 'dash.keys.resource_customers',
  quotes: 'dash.keys.resource_quotes',
  payins: 'dash.keys.resource_payins',
  payouts: 'dash.keys.resource_payouts',
  transfers: 'dash.keys.resource_transfers',
  refunds: 'dash.keys.resource_refunds',
  payment_links: 'dash.keys.resource_payment_links',
  wallets: 'dash.keys.resource_wallets',
  events: 'dash.keys.resource_events',
  webhooks: 'dash.keys.resource_webhooks',
};

const readOnly = (): KeyScope[] => SCOPE_RESOURCES.map((r) => `${r}:read` as const);

export function scopesFromForm(req: Request): KeyScope[] {
  const access = field(req, 'access') || 'all';
  if (access === 'all') return [...EVERYTHING];
  if (access === 'read_only') return readOnly();
  if (access !== 'custom') throw new Refusal('dash.error.access_choice');
  const scopes: KeyScope[] = [];
  for (const r of SCOPE_RESOURCES) {
    const level = field(req, levelField(r)) || 'none';
    if (!(LEVEL_CHOICES as readonly string[]).includes(level)) throw new Refusal('dash.error.access_choice');
    if (level !== 'none') scopes.push(`${r}:${level as 'read' | 'write'}`);
  }
  if (scopes.length === 0) throw new Refusal('dash.error.scopes_empty');
  return scopes;
}

/** Whether a key's scopes are exactly the read-only choice (shown as such on the keys page). */
export const isReadOnly = (scopes: readonly string[]) =>
  scopes.length === SCOPE_RESOURCES.length && readOnly().every((s) => scopes.includes(s));
