// The audit log (CONTRACT §18, issue 43 point 4): one entry per change made through the operator API
// or the dashboard: who (the operator, named by a fingerprint of its token, or a dashboard member),
// what (an action and its target), when, from which address and under which request. An entry is a
// fact recorded after the change succeeded, never a decision: nothing reads the log to decide, so its
// streams (`audit-<merchant id>`, `audit-operator` for changes that name no merchant) are appended
// to without a version check. An entry holds ids only, never a secret, password, token or OTP.
import type { DomainEvent } from './decider.ts';
import { invariant } from './errors.ts';

/** What an entry may say was done. A new audited route adds its action here (the list filters and the catalogues name them). */
export const AUDIT_ACTIONS = [
  // The operator API.
  'merchant.created', 'merchant.status_set', 'merchant.routing_set', 'merchant.corridor_added', 'merchant.corridor_removed',
  'merchant.pricing_set', 'wallet.topped_up', 'operator.availability_set', 'operator.routing_set',
  'projection.rebuild_started', 'two_factor.reset',
  // Both.
  'dashboard_user.invited', 'api_key.created', 'api_key.rotated', 'api_key.revoked', 'webhook.url_set', 'webhook.secret_rotated',
  // The dashboard.
  'session.signed_out', 'webhook.test_sent', 'webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.status_set',
  'webhook_endpoint.deleted', 'webhook_endpoint.secret_rotated', 'event.redelivery_requested', 'refund.created',
  'payment_link.created', 'payment_link.deactivated', 'dashboard_user.role_changed', 'dashboard_user.removed', 'session.ended',
  'session.others_ended', 'two_factor.enrolled', 'two_factor.disabled', 'two_factor.requirement_set',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_ACTOR_TYPES = ['operator', 'member'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

export interface AuditActor {
  type: AuditActorType;
  /** operator: the first 12 hex digits of the SHA-256 of the token used; member: the dashboard user's id. */
  id: string;
}

export interface AuditTarget {
  /** What was changed: merchant, api_key, webhook_endpoint, refund, payment_link, operator… */
  type: string;
  id: string;
}

export interface AuditEntry {
  id: string;
  /** ISO 8601, the service's clock when the change had succeeded. */
  at: string;
  /** The merchant the change concerns; null for an operator-wide one (an operator's availability, a projection). */
  merchant_id: string | null;
  actor: AuditActor;
  action: AuditAction;
  target: AuditTarget;
  request_id: string;
  ip: string;
}

export type AuditEvent = DomainEvent<'audit.recorded', AuditEntry>;

export const AUDIT_STREAM_PREFIX = 'audit-';
/** Changes that name no merchant. */
export const OPERATOR_AUDIT_STREAM = `${AUDIT_STREAM_PREFIX}operator`;

export const auditStreamOf = (merchantId: string | null) => (merchantId === null ? OPERATOR_AUDIT_STREAM : `${AUDIT_STREAM_PREFIX}${merchantId}`);

export const isAuditAction = (v: string): v is AuditAction => (AUDIT_ACTIONS as readonly string[]).includes(v);

/**
 * An id as an entry may carry it: a uuid, a code, a name, a fingerprint. The bound and the alphabet
 * keep free text (a URL, a description, an e-mail address) out, so an entry cannot become the place
 * a secret or personal data is copied to by mistake.
 */
export const ID_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;
const TYPE_PATTERN = /^[a-z][a-z_]{0,39}$/;
const REQUEST_ID = /^[A-Za-z0-9._-]{0,100}$/;
const IP = /^[0-9A-Fa-f:.]{0,45}$/;

/** The entry, checked: a broken one is a bug in the route that declared it, never something to store. */
export function auditEntry(e: AuditEntry): AuditEntry {
  invariant(isAuditAction(e.action), `audit: unknown action ${e.action}`);
  invariant((AUDIT_ACTOR_TYPES as readonly string[]).includes(e.actor.type) && ID_PATTERN.test(e.actor.id), 'audit: the actor is not an id');
  invariant(TYPE_PATTERN.test(e.target.type) && ID_PATTERN.test(e.target.id), `audit: the target of ${e.action} is not a type and an id`);
  invariant(e.merchant_id === null || ID_PATTERN.test(e.merchant_id), 'audit: the merchant is not an id');
  invariant(REQUEST_ID.test(e.request_id) && IP.test(e.ip), 'audit: the request id or the address is malformed');
  invariant(!Number.isNaN(Date.parse(e.at)), 'audit: the time is not a date');
  return e;
}
