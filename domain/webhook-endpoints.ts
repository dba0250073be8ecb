// A merchant's webhook endpoints (CONTRACT.md §11): one stream per merchant
// (`webhook_endpoints-<merchant>`) holding every endpoint it has, each with its URL, event filter,
// status and signing secret (sealed: the secret never enters an event in clear). One stream makes
// "the merchant's first endpoint" (what the operator's PUT /admin/merchants/{id}/webhook sets) and
// "another merchant's endpoint is a 404" plain facts of one fold.
//
// A merchant configured before endpoints existed has its URL and secret on its own stream
// (merchant.webhook_configured): until this stream has an event, that URL is its one endpoint (id:
// the merchant id, every event), and the first command here adopts it (`Adopt`) before its own.
//
// Staged rotation: a rotation keeps the current secret and adds the next one with the instant it
// takes over (`activates_at`); `signingSecretAt` says which one signs at a given time. A later
// rotation first promotes a next secret already active, then stages its own (replacing one not yet
// active: a merchant that rotates twice within the window never receives the first new secret).
//
// Limits (CONTRACT.md §17): at most MAX_ENDPOINTS live endpoints per merchant, decided here on the
// one stream, so two racing creates cannot both pass (the append's expected version: the second is
// decided again on the state the first left). A deleted endpoint's id is remembered: a create retried
// under its id (the same Idempotency-Key, after the first answer was lost) is refused, never made
// again with a new secret.
import { DomainError, refuse } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { WEBHOOK_EVENTS_BY_TYPE } from './webhook-events.ts';

export type EndpointStatus = 'enabled' | 'disabled';
/** Why an endpoint changed status: the merchant (or operator) asked, it answered 410, or it failed for 72 hours. */
export type StatusReason = 'requested' | 'gone' | 'failing';

/** Every event name (`"*"`) or a list of names. */
export const ALL_EVENTS = '*';

export interface WebhookEndpoint {
  id: string;
  url: string;
  enabledEvents: string[];
  description: string | null;
  status: EndpointStatus;
  /** The signing secret in force, sealed (infra/secrets.ts). */
  secretSealed: string;
  /** A rotation's new secret and when it takes over. */
  nextSecret: { sealed: string; activatesAt: string } | null;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointsState {
  /** Whether this stream has any event (else a legacy URL on the merchant stream is the endpoint). */
  started: boolean;
  /** Live endpoints, oldest first (the first is the operator's). */
  endpoints: WebhookEndpoint[];
  /** The ids of deleted endpoints: a create under one of them is refused (it would resurrect it). */
  deleted: string[];
}

/**
 * Live endpoints a merchant may have. Each event fans out to each of them and each holds delivery
 * slots: the bound keeps one merchant's share of both finite (CONTRACT.md §17).
 */
export const MAX_ENDPOINTS = 16;

interface Created {
  endpoint_id: string; url: string; enabled_events: string[]; description: string | null; signing_secret_sealed: string;
  /** The merchant's URL from before endpoints, taken over as its first endpoint. */
  adopted: boolean; at: string;
}

export type EndpointEvent =
  | DomainEvent<'webhook_endpoint.created', Created>
  | DomainEvent<'webhook_endpoint.updated', { endpoint_id: string; url?: string; enabled_events?: string[]; description?: string | null; at: string }>
  | DomainEvent<'webhook_endpoint.status_changed', { endpoint_id: string; status: EndpointStatus; reason: StatusReason; at: string }>
  | DomainEvent<'webhook_endpoint.secret_rotated', { endpoint_id: string; signing_secret_sealed: string; activates_at: string; at: string }>
  | DomainEvent<'webhook_endpoint.deleted', { endpoint_id: string; at: string }>;

export interface CreateEndpoint {
  endpointId: string; url: string; enabledEvents: string[]; description: string | null; sealedSecret: string; at: string;
}
export interface UpdateEndpoint {
  endpointId: string; url?: string; enabledEvents?: string[]; description?: string | null; status?: EndpointStatus; at: string;
}
export interface RotateSecret { endpointId: string; sealedSecret: string; activatesAt: string; at: string }
/** The merchant's pre-endpoint URL and secret (merchant stream), adopted as the first endpoint. */
export interface Legacy { endpointId: string; url: string; sealedSecret: string; at: string }

export type EndpointCommand =
  | { type: 'Adopt'; data: Legacy }
  | { type: 'CreateEndpoint'; data: CreateEndpoint }
  | { type: 'UpdateEndpoint'; data: UpdateEndpoint }
  | { type: 'DisableEndpoint'; data: { endpointId: string; reason: StatusReason; at: string } }
  | { type: 'DeleteEndpoint'; data: { endpointId: string; at: string } }
  | { type: 'RotateSecret'; data: RotateSecret }
  /** The operator's (and the dashboard's) rotate-secret: the first endpoint's, at once. */
  | { type: 'RotateFirst'; data: { sealedSecret: string; at: string } }
  /** The operator's PUT: the first endpoint's URL and an immediate new secret, or a new endpoint for every event. */
  | { type: 'ConfigureFirst'; data: CreateEndpoint };

/** The secret that signs an attempt made at `at` (staged rotation). */
export function signingSecretAt(e: WebhookEndpoint, at: Date): string {
  return e.nextSecret && Date.parse(e.nextSecret.activatesAt) <= at.getTime() ? e.nextSecret.sealed : e.secretSealed;
}

/** Every name an endpoint may filter on (domain/webhook-events.ts: the one list). */
export const filterableEvents = (): string[] => [...new Set(Object.values(WEBHOOK_EVENTS_BY_TYPE).flat())].sort();

/** `["*"]` or known event names, each once; refused as a bad_request naming the unknown ones. */
export function checkEnabledEvents(list: string[], field = 'enabled_events'): string[] {
  const known = filterableEvents();
  const unique = [...new Set(list)];
  if (unique.length === 0) throw new DomainError('bad_request', 'enabled_events is empty', [{ field, message: 'must list at least one event name, or "*"' }]);
  if (unique.includes(ALL_EVENTS)) {
    if (unique.length > 1) throw new DomainError('bad_request', 'enabled_events mixes "*" with names', [{ field, message: '"*" (every event) stands alone' }]);
    return unique;
  }
  const unknown = unique.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new DomainError('bad_request', 'Unknown event names', unknown.map((n) => ({ field, message: `unknown event ${n} (known: ${known.join(', ')})` })));
  }
  return unique;
}

/** Whether an endpoint's filter takes this event name. */
export const acceptsEvent = (e: WebhookEndpoint, event: string) => e.enabledEvents.includes(ALL_EVENTS) || e.enabledEvents.includes(event);

/** The endpoint, or a not_found refusal (another merchant's endpoint is simply not in this stream). */
export function endpointIn(s: EndpointsState, id: string): WebhookEndpoint {
  const e = s.endpoints.find((x) => x.id === id);
  if (!e) refuse('not_found', 'Webhook endpoint not found');
  return e!;
}

const patch = (s: EndpointsState, id: string, f: (e: WebhookEndpoint) => WebhookEndpoint): EndpointsState =>
  ({ ...s, endpoints: s.endpoints.map((e) => (e.id === id ? f(e) : e)) });

function rotated(e: WebhookEndpoint, d: { signing_secret_sealed: string; activates_at: string; at: string }): WebhookEndpoint {
  const current = signingSecretAt(e, new Date(d.at));
  if (Date.parse(d.activates_at) <= Date.parse(d.at)) return { ...e, secretSealed: d.signing_secret_sealed, nextSecret: null, updatedAt: d.at };
  return { ...e, secretSealed: current, nextSecret: { sealed: d.signing_secret_sealed, activatesAt: d.activates_at }, updatedAt: d.at };
}

function evolve(s: EndpointsState, e: EndpointEvent): EndpointsState {
  const started = { ...s, started: true };
  switch (e.type) {
    case 'webhook_endpoint.created': {
      const d = e.data;
      const endpoint: WebhookEndpoint = {
        id: d.endpoint_id, url: d.url, enabledEvents: d.enabled_events, description: d.description, status: 'enabled',
        secretSealed: d.signing_secret_sealed, nextSecret: null, createdAt: d.at, updatedAt: d.at,
      };
      return { ...started, endpoints: [...s.endpoints, endpoint] };
    }
    case 'webhook_endpoint.updated': {
      const d = e.data;
      return patch(started, d.endpoint_id, (x) => ({
        ...x, url: d.url ?? x.url, enabledEvents: d.enabled_events ?? x.enabledEvents,
        description: d.description === undefined ? x.description : d.description, updatedAt: d.at,
      }));
    }
    case 'webhook_endpoint.status_changed':
      return patch(started, e.data.endpoint_id, (x) => ({ ...x, status: e.data.status, updatedAt: e.data.at }));
    case 'webhook_endpoint.secret_rotated':
      return patch(started, e.data.endpoint_id, (x) => rotated(x, e.data));
    case 'webhook_endpoint.deleted':
      return { ...started, endpoints: s.endpoints.filter((x) => x.id !== e.data.endpoint_id), deleted: [...s.deleted, e.data.endpoint_id] };
    default:
      return unreachable(e);
  }
}

const created = (c: CreateEndpoint, adopted: boolean): EndpointEvent => ({
  type: 'webhook_endpoint.created',
  data: {
    endpoint_id: c.endpointId, url: c.url, enabled_events: c.enabledEvents, description: c.description,
    signing_secret_sealed: c.sealedSecret, adopted, at: c.at,
  },
});

function update(s: EndpointsState, c: UpdateEndpoint): EndpointEvent[] {
  const e = endpointIn(s, c.endpointId);
  if (c.enabledEvents !== undefined) c = { ...c, enabledEvents: checkEnabledEvents(c.enabledEvents) };
  const out: EndpointEvent[] = [];
  const changed = {
    ...(c.url !== undefined && c.url !== e.url ? { url: c.url } : {}),
    ...(c.enabledEvents !== undefined && c.enabledEvents.join('\n') !== e.enabledEvents.join('\n') ? { enabled_events: c.enabledEvents } : {}),
    ...(c.description !== undefined && c.description !== e.description ? { description: c.description } : {}),
  };
  if (Object.keys(changed).length > 0) out.push({ type: 'webhook_endpoint.updated', data: { endpoint_id: e.id, ...changed, at: c.at } });
  if (c.status !== undefined && c.status !== e.status) {
    out.push({ type: 'webhook_endpoint.status_changed', data: { endpoint_id: e.id, status: c.status, reason: 'requested', at: c.at } });
  }
  return out;
}

/**
 * A new endpoint: an id already live is a retried create (nothing to do); a deleted one is refused
 * (a retry of a create whose endpoint was deleted since must not bring it back); beyond the limit,
 * limit_exceeded.
 */
function create(s: EndpointsState, c: CreateEndpoint): EndpointEvent[] {
  if (s.endpoints.some((e) => e.id === c.endpointId)) return [];
  if (s.deleted.includes(c.endpointId)) refuse('not_found', 'This webhook endpoint was deleted; it is not created again');
  if (s.endpoints.length >= MAX_ENDPOINTS) {
    refuse('limit_exceeded', `A merchant has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
  }
  return [created({ ...c, enabledEvents: checkEnabledEvents(c.enabledEvents) }, false)];
}

/** The operator's PUT: sets the first endpoint's URL with a new secret at once, or creates it for every event. */
function configureFirst(s: EndpointsState, c: CreateEndpoint): EndpointEvent[] {
  const first = s.endpoints[0];
  if (!first) return [created({ ...c, enabledEvents: [ALL_EVENTS], description: null }, false)];
  return [
    ...update(s, { endpointId: first.id, url: c.url, at: c.at }),
    { type: 'webhook_endpoint.secret_rotated', data: { endpoint_id: first.id, signing_secret_sealed: c.sealedSecret, activates_at: c.at, at: c.at } },
  ];
}

function decide(c: EndpointCommand, s: EndpointsState): EndpointEvent[] {
  switch (c.type) {
    case 'Adopt':
      if (s.started) return [];
      return [created({ ...c.data, enabledEvents: [ALL_EVENTS], description: null }, true)];
    case 'CreateEndpoint':
      return create(s, c.data);
    case 'UpdateEndpoint':
      return update(s, c.data);
    case 'DisableEndpoint': {
      const e = s.endpoints.find((x) => x.id === c.data.endpointId);
      if (!e || e.status === 'disabled') return [];
      return [{ type: 'webhook_endpoint.status_changed', data: { endpoint_id: e.id, status: 'disabled', reason: c.data.reason, at: c.data.at } }];
    }
    case 'DeleteEndpoint':
      return [{ type: 'webhook_endpoint.deleted', data: { endpoint_id: endpointIn(s, c.data.endpointId).id, at: c.data.at } }];
    case 'RotateSecret': {
      const e = endpointIn(s, c.data.endpointId);
      const d = c.data;
      return [{ type: 'webhook_endpoint.secret_rotated', data: { endpoint_id: e.id, signing_secret_sealed: d.sealedSecret, activates_at: d.activatesAt, at: d.at } }];
    }
    case 'RotateFirst': {
      const first = s.endpoints[0];
      if (!first) refuse('bad_request', 'No webhook URL is configured for this merchant');
      const d = c.data;
      return [{ type: 'webhook_endpoint.secret_rotated', data: { endpoint_id: first!.id, signing_secret_sealed: d.sealedSecret, activates_at: d.at, at: d.at } }];
    }
    case 'ConfigureFirst':
      return configureFirst(s, c.data);
    default:
      return unreachable(c);
  }
}

export const endpointsDecider = {
  initialState: (): EndpointsState => ({ started: false, endpoints: [], deleted: [] }),
  evolve,
  decide,
} satisfies CommandDecider<EndpointsState, EndpointEvent, EndpointCommand>;
