// The merchant aggregate: account status, API keys, webhook endpoint, routing and pricing.
// Secrets never enter events in clear: API secrets as keyed hashes, the signing secret sealed.
import { DomainError, refuse, type ErrorDetail } from './errors.ts';
import { checkFeeRule } from './money.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { OPERATOR_CODES, ALL_CORRIDORS } from './catalogue.ts';
import { EVERYTHING, normaliseScopes, scopeProblems, type KeyScope } from './api-key-scopes.ts';

export interface Routing {
  payin_operators: string[];
  payout_operators: string[];
  corridors: string[];
  /** Operators whose payouts and transfers need the customer's KYC `verified`. */
  kyc_required_operators: string[];
}

export interface PriceRule {
  percent: string;
  fixed: string;
}

export interface Pricing {
  payin: PriceRule;
  payout: PriceRule;
  transfer: PriceRule;
}

export type MerchantStatus = 'active' | 'inactive';

export interface ApiKey {
  keyId: string;
  apiKey: string;
  status: 'active' | 'revoked';
  expiresAt: string | null;
  createdAt: string;
  /** What the key may do (domain/api-key-scopes.ts); ["*"] for a key created before scopes existed. */
  scopes: KeyScope[];
}

export type MerchantEvent =
  | DomainEvent<'merchant.created', { merchant_id: string; name: string; routing: Routing; pricing: Pricing; at: string }>
  | DomainEvent<'merchant.status_changed', { status: MerchantStatus; at: string }>
  /** `scopes` absent: a key created before scopes existed, which may do everything (["*"]). */
  | DomainEvent<'merchant.api_key_created', { key_id: string; api_key: string; secret_hash: string; expires_at: string | null; scopes?: KeyScope[]; at: string }>
  | DomainEvent<'merchant.api_key_rotated', { key_id: string; secret_hash: string; previous_secret_hash: string; previous_valid_until: string; at: string }>
  | DomainEvent<'merchant.api_key_revoked', { key_id: string; at: string }>
  | DomainEvent<'merchant.webhook_configured', { url: string; signing_secret_sealed: string; at: string }>
  | DomainEvent<'merchant.routing_set', { routing: Routing; at: string }>
  /** One corridor added or removed (issue 31); `corridors` is the list it leaves. */
  | DomainEvent<'merchant.corridor_added', { corridor: string; corridors: string[]; at: string }>
  | DomainEvent<'merchant.corridor_removed', { corridor: string; corridors: string[]; at: string }>
  | DomainEvent<'merchant.pricing_set', { pricing: Pricing; at: string }>;

export interface MerchantState {
  exists: boolean;
  id: string;
  name: string;
  status: MerchantStatus;
  routing: Routing;
  pricing: Pricing;
  keys: Record<string, ApiKey & { secretHash: string }>;
  webhookUrl: string | null;
  /** The webhook signing secret, sealed (infra/secrets.ts): what deliveries sign with. */
  webhookSecretSealed: string | null;
  createdAt: string;
}

export const DEFAULT_ROUTING: Routing = {
  payin_operators: [...OPERATOR_CODES],
  payout_operators: [...OPERATOR_CODES],
  corridors: [],
  kyc_required_operators: [],
};

export const DEFAULT_PRICING: Pricing = {
  payin: { percent: '1.5', fixed: '0' },
  payout: { percent: '1', fixed: '0' },
  transfer: { percent: '2', fixed: '0' },
};

/** What the operator (or the merchant, from the dashboard) may ask of a merchant, each a plain value. */
export type MerchantCommand =
  | { type: 'CreateMerchant'; data: CreateMerchant }
  | { type: 'SetMerchantStatus'; data: { status: MerchantStatus; at: string } }
  | { type: 'CreateApiKey'; data: CreateApiKey }
  | { type: 'RotateApiKey'; data: RotateApiKey }
  | { type: 'RevokeApiKey'; data: { keyId: string; at: string } }
  | { type: 'ConfigureWebhook'; data: ConfigureWebhook }
  | { type: 'RotateWebhookSecret'; data: RotateWebhookSecret }
  | { type: 'SetRouting'; data: { routing: Partial<Routing>; at: string } }
  | { type: 'AddCorridor'; data: { corridor: string; at: string } }
  | { type: 'RemoveCorridor'; data: { corridor: string; at: string } }
  | { type: 'SetPricing'; data: { pricing: Partial<Pricing>; at: string } };

export const merchantDecider = {
  initialState: (): MerchantState => ({
    exists: false, id: '', name: '', status: 'active', routing: DEFAULT_ROUTING, pricing: DEFAULT_PRICING,
    keys: {}, webhookUrl: null, webhookSecretSealed: null, createdAt: '',
  }),
  evolve(s: MerchantState, e: MerchantEvent): MerchantState {
    switch (e.type) {
      case 'merchant.created':
        return { ...s, exists: true, id: e.data.merchant_id, name: e.data.name, routing: e.data.routing, pricing: e.data.pricing, createdAt: e.data.at };
      case 'merchant.status_changed':
        return { ...s, status: e.data.status };
      case 'merchant.api_key_created':
        return {
          ...s,
          keys: {
            ...s.keys,
            [e.data.key_id]: {
              keyId: e.data.key_id, apiKey: e.data.api_key, status: 'active', expiresAt: e.data.expires_at,
              createdAt: e.data.at, secretHash: e.data.secret_hash, scopes: e.data.scopes ?? [...EVERYTHING],
            },
          },
        };
      case 'merchant.api_key_rotated': {
        const k = s.keys[e.data.key_id]!;
        return { ...s, keys: { ...s.keys, [e.data.key_id]: { ...k, secretHash: e.data.secret_hash } } };
      }
      case 'merchant.api_key_revoked': {
        const k = s.keys[e.data.key_id]!;
        return { ...s, keys: { ...s.keys, [e.data.key_id]: { ...k, status: 'revoked' } } };
      }
      case 'merchant.webhook_configured':
        return { ...s, webhookUrl: e.data.url, webhookSecretSealed: e.data.signing_secret_sealed };
      case 'merchant.routing_set':
        return { ...s, routing: e.data.routing };
      case 'merchant.corridor_added':
      case 'merchant.corridor_removed':
        return { ...s, routing: { ...s.routing, corridors: e.data.corridors } };
      case 'merchant.pricing_set':
        return { ...s, pricing: e.data.pricing };
      default:
        return unreachable(e);
    }
  },
  decide(command: MerchantCommand, s: MerchantState): MerchantEvent[] {
    switch (command.type) {
      case 'CreateMerchant':
        return createMerchant(s, command.data);
      case 'SetMerchantStatus':
        return setStatus(s, command.data);
      case 'CreateApiKey':
        return createApiKey(s, command.data);
      case 'RotateApiKey':
        return rotateApiKey(s, command.data);
      case 'RevokeApiKey':
        return revokeApiKey(s, command.data);
      case 'ConfigureWebhook':
        return configureWebhook(s, command.data);
      case 'RotateWebhookSecret':
        return rotateWebhookSecret(s, command.data);
      case 'SetRouting':
        return setRouting(s, command.data);
      case 'AddCorridor':
        return addCorridor(s, command.data);
      case 'RemoveCorridor':
        return removeCorridor(s, command.data);
      case 'SetPricing':
        return setPricing(s, command.data);
      default:
        return unreachable(command);
    }
  },
} satisfies CommandDecider<MerchantState, MerchantEvent, MerchantCommand>;

// ---- decisions (pure; time and generated values arrive in the command) ----

interface CreateMerchant {
  merchantId: string;
  name: string;
  at: string;
}

interface CreateApiKey {
  keyId: string;
  /** The public half, shown in clear. */
  apiKey: string;
  /** The secret as a keyed hash (infra/secrets.ts): the secret itself never enters an event. */
  secretHash: string;
  expiresAt: string | null;
  /** As asked: checked and normalised here (domain/api-key-scopes.ts). */
  scopes: readonly string[];
  at: string;
}

interface RotateApiKey {
  keyId: string;
  secretHash: string;
  /** How long the previous secret keeps working. */
  graceSeconds: number;
  at: string;
}

interface ConfigureWebhook {
  url: string;
  /** The new signing secret, sealed (infra/secrets.ts). */
  sealedSecret: string;
  at: string;
}

/** A new signing secret for the webhook URL in force (which must exist). */
type RotateWebhookSecret = Omit<ConfigureWebhook, 'url'>;

function createMerchant(s: MerchantState, c: CreateMerchant): MerchantEvent[] {
  if (s.exists) return []; // a retried create with the same id: already done
  return [{ type: 'merchant.created', data: { merchant_id: c.merchantId, name: c.name, routing: DEFAULT_ROUTING, pricing: DEFAULT_PRICING, at: c.at } }];
}

/** Every command but the creation needs the merchant (and so does a decision that reads it). */
export function requireMerchant(s: MerchantState): void {
  if (!s.exists) refuse('not_found', 'Merchant not found');
}

function setStatus(s: MerchantState, c: { status: MerchantStatus; at: string }): MerchantEvent[] {
  requireMerchant(s);
  if (s.status === c.status) return [];
  return [{ type: 'merchant.status_changed', data: { status: c.status, at: c.at } }];
}

function createApiKey(s: MerchantState, c: CreateApiKey): MerchantEvent[] {
  requireMerchant(s);
  if (c.expiresAt !== null && Date.parse(c.expiresAt) <= Date.parse(c.at)) {
    refuse('bad_request', 'expires_at must be in the future', [{ field: 'expires_at', message: 'must be in the future' }]);
  }
  const problems = scopeProblems(c.scopes);
  if (problems.length > 0) refuse('bad_request', 'Invalid scopes', problems);
  return [{
    type: 'merchant.api_key_created',
    data: { key_id: c.keyId, api_key: c.apiKey, secret_hash: c.secretHash, expires_at: c.expiresAt, scopes: normaliseScopes(c.scopes), at: c.at },
  }];
}

function rotateApiKey(s: MerchantState, c: RotateApiKey): MerchantEvent[] {
  requireMerchant(s);
  const key = s.keys[c.keyId];
  if (!key) refuse('not_found', 'API key not found');
  if (key!.status === 'revoked') refuse('bad_request', 'A revoked key cannot be rotated');
  const until = new Date(Date.parse(c.at) + c.graceSeconds * 1000).toISOString();
  return [{
    type: 'merchant.api_key_rotated',
    data: { key_id: c.keyId, secret_hash: c.secretHash, previous_secret_hash: key!.secretHash, previous_valid_until: until, at: c.at },
  }];
}

function revokeApiKey(s: MerchantState, c: { keyId: string; at: string }): MerchantEvent[] {
  requireMerchant(s);
  const key = s.keys[c.keyId];
  if (!key) refuse('not_found', 'API key not found');
  if (key!.status === 'revoked') return [];
  return [{ type: 'merchant.api_key_revoked', data: { key_id: c.keyId, at: c.at } }];
}

function configureWebhook(s: MerchantState, c: ConfigureWebhook): MerchantEvent[] {
  requireMerchant(s);
  return [{ type: 'merchant.webhook_configured', data: { url: c.url, signing_secret_sealed: c.sealedSecret, at: c.at } }];
}

function rotateWebhookSecret(s: MerchantState, c: RotateWebhookSecret): MerchantEvent[] {
  requireMerchant(s);
  if (!s.webhookUrl) refuse('bad_request', 'No webhook URL is configured for this merchant');
  return configureWebhook(s, { ...c, url: s.webhookUrl! });
}

function setRouting(s: MerchantState, c: { routing: Partial<Routing>; at: string }): MerchantEvent[] {
  requireMerchant(s);
  const routing: Routing = { ...s.routing, ...c.routing };
  const details = [
    ...unknownCodes('payin_operators', routing.payin_operators, OPERATOR_CODES),
    ...unknownCodes('payout_operators', routing.payout_operators, OPERATOR_CODES),
    ...unknownCodes('kyc_required_operators', routing.kyc_required_operators, OPERATOR_CODES),
    ...unknownCodes('corridors', routing.corridors, ALL_CORRIDORS),
  ];
  if (details.length > 0) throw new DomainError('bad_request', 'Unknown codes in routing', details);
  const dedupe = (a: string[]) => [...new Set(a)];
  return [{
    type: 'merchant.routing_set',
    data: {
      routing: {
        payin_operators: dedupe(routing.payin_operators),
        payout_operators: dedupe(routing.payout_operators),
        corridors: dedupe(routing.corridors),
        kyc_required_operators: dedupe(routing.kyc_required_operators),
      },
      at: c.at,
    },
  }];
}

/**
 * One corridor enabled, the others kept (the operator no longer has to send the whole list). Adding
 * one already enabled changes nothing: no event, the same answer (a retried PUT).
 */
function addCorridor(s: MerchantState, c: { corridor: string; at: string }): MerchantEvent[] {
  requireMerchant(s);
  if (!ALL_CORRIDORS.includes(c.corridor)) {
    throw new DomainError('bad_request', `Unknown corridor ${c.corridor}`, [
      { field: 'corridor_code', message: 'is not a corridor between two covered countries in their currencies (e.g. CM-SN-XAF-XOF)' },
    ]);
  }
  if (s.routing.corridors.includes(c.corridor)) return [];
  return [{ type: 'merchant.corridor_added', data: { corridor: c.corridor, corridors: [...s.routing.corridors, c.corridor], at: c.at } }];
}

/** One corridor disabled; one that is not enabled changes nothing (a retried DELETE). */
function removeCorridor(s: MerchantState, c: { corridor: string; at: string }): MerchantEvent[] {
  requireMerchant(s);
  if (!s.routing.corridors.includes(c.corridor)) return [];
  return [{
    type: 'merchant.corridor_removed',
    data: { corridor: c.corridor, corridors: s.routing.corridors.filter((k) => k !== c.corridor), at: c.at },
  }];
}

function unknownCodes(field: string, values: string[], known: readonly string[]) {
  return values.filter((v) => !known.includes(v)).map((v) => ({ field, message: `unknown code ${v}` }));
}

function setPricing(s: MerchantState, c: { pricing: Partial<Pricing>; at: string }): MerchantEvent[] {
  requireMerchant(s);
  // Every quote computes its fee from these rules: a rule it could not use is refused here.
  const details: ErrorDetail[] = [];
  for (const flow of ['payin', 'payout', 'transfer'] as const) {
    const rule = c.pricing[flow];
    if (rule === undefined) continue;
    try {
      checkFeeRule(rule, flow);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      details.push(...(err.details ?? []));
    }
  }
  if (details.length > 0) throw new DomainError('bad_request', 'Invalid pricing', details);
  return [{ type: 'merchant.pricing_set', data: { pricing: { ...s.pricing, ...c.pricing }, at: c.at } }];
}
