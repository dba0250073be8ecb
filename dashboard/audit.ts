// The dashboard's audit log (CONTRACT §18): every signed-in POST declares below the action it
// records, its target, and what answer means it was done; the dashboard refuses to start when a
// signed-in POST route has no declaration (everyChangeDeclared), so a new form cannot be forgotten.
// Once the answer is sent (`finish`), a change that was done is recorded with the member as its actor
// (commands/audit-log.ts). A refused form (4xx), a confirmation page, a form sent again (form-once.ts)
// or a failure records nothing.
import type { NextFunction, Request, Response, Router } from 'express';
import type { ApiServices } from '../api/services.ts';
import { recordAuditEntry } from '../commands/audit-log.ts';
import type { AuditAction } from '../domain/audit-log.ts';
import { formRan } from './audit-notes.ts';
import { locals, requestId } from './http.ts';
import type { Session } from './session.ts';

/** The target's id: a path parameter, a field of the one-time form's summary (what it created), the member, or the merchant. */
type TargetId = { param: string } | { summary: string } | 'member' | 'merchant';

/**
 * What answer says the change was done: `once`, the one-time form ran (form-once.ts; not a repeat,
 * not a confirmation page) and the answer is not a refusal; a status, that answer (a 303 after the
 * change where a confirmation page is a 200).
 */
type Done = 'once' | 200 | 303;

interface DeclaredChange { action: AuditAction; target: { type: string; id: TargetId }; done: Done }

const change = (action: AuditAction, type: string, id: TargetId, done: Done): DeclaredChange => ({ action, target: { type, id }, done });

/** Every signed-in POST route, by its path as the router has it. */
export const DASHBOARD_CHANGES: Record<string, DeclaredChange> = {
  '/sign-out': change('session.signed_out', 'dashboard_user', 'member', 303),
  '/keys': change('api_key.created', 'api_key', { summary: 'key_id' }, 'once'),
  '/keys/:keyId/rotate': change('api_key.rotated', 'api_key', { param: 'keyId' }, 'once'),
  '/keys/:keyId/revoke': change('api_key.revoked', 'api_key', { param: 'keyId' }, 303),
  '/webhooks': change('webhook.url_set', 'merchant', 'merchant', 'once'),
  '/webhooks/rotate-secret': change('webhook.secret_rotated', 'merchant', 'merchant', 'once'),
  '/webhooks/test': change('webhook.test_sent', 'webhook_test', { summary: 'test_id' }, 'once'),
  '/webhooks/endpoints': change('webhook_endpoint.created', 'webhook_endpoint', { summary: 'endpoint_id' }, 'once'),
  '/webhooks/endpoints/:endpointId': change('webhook_endpoint.updated', 'webhook_endpoint', { param: 'endpointId' }, 303),
  '/webhooks/endpoints/:endpointId/status': change('webhook_endpoint.status_set', 'webhook_endpoint', { param: 'endpointId' }, 303),
  '/webhooks/endpoints/:endpointId/delete': change('webhook_endpoint.deleted', 'webhook_endpoint', { param: 'endpointId' }, 303),
  '/webhooks/endpoints/:endpointId/rotate-secret': change('webhook_endpoint.secret_rotated', 'webhook_endpoint', { param: 'endpointId' }, 'once'),
  '/events/:eventId/redeliver': change('event.redelivery_requested', 'event', { param: 'eventId' }, 'once'),
  '/payins/:id/refunds': change('refund.created', 'refund', { summary: 'refund_id' }, 'once'),
  '/links': change('payment_link.created', 'payment_link', { summary: 'link_id' }, 'once'),
  '/links/:linkId/deactivate': change('payment_link.deactivated', 'payment_link', { param: 'linkId' }, 'once'),
  '/team/invite': change('dashboard_user.invited', 'dashboard_user', { summary: 'member_id' }, 'once'),
  '/team/:memberId/role': change('dashboard_user.role_changed', 'dashboard_user', { param: 'memberId' }, 303),
  '/team/:memberId/remove': change('dashboard_user.removed', 'dashboard_user', { param: 'memberId' }, 303),
  '/sessions/end-others': change('session.others_ended', 'dashboard_user', 'member', 303),
  '/sessions/:publicId/end': change('session.ended', 'session', { param: 'publicId' }, 303),
  '/two-factor/enrol': change('two_factor.enrolled', 'dashboard_user', 'member', 200),
  '/two-factor/disable': change('two_factor.disabled', 'dashboard_user', 'member', 303),
  '/two-factor/require': change('two_factor.requirement_set', 'merchant', 'merchant', 303),
};

function wasDone(d: DeclaredChange, session: Session, status: number): boolean {
  return d.done === 'once' ? status < 400 && formRan(session) !== undefined : status === d.done;
}

function targetId(d: DeclaredChange, req: Request, session: Session): string | undefined {
  const id = d.target.id;
  if (id === 'member') return session.userId;
  if (id === 'merchant') return session.merchantId;
  const v = 'param' in id ? req.params[id.param] : formRan(session)?.[id.summary];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

async function record(s: ApiServices, d: DeclaredChange, req: Request, session: Session): Promise<void> {
  const id = targetId(d, req, session);
  if (id === undefined) throw new Error(`the target of ${d.action} is missing from the request`);
  await recordAuditEntry(s, {
    merchant_id: session.merchantId, actor: { type: 'member', id: session.userId }, action: d.action,
    target: { type: d.target.type, id }, request_id: requestId(req), ip: req.socket.remoteAddress ?? '',
  });
}

function afterAnswer(s: ApiServices, req: Request, res: Response): void {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  const d = typeof path === 'string' ? DASHBOARD_CHANGES[path] : undefined;
  const session = (res.locals as Partial<ReturnType<typeof locals>>).session;
  if (!d || !session || !wasDone(d, session, res.statusCode)) return;
  // The change is made and answered: a lost entry is said loudly (docs/AUDIT-LOG.md), never turned into a failed answer.
  record(s, d, req, session).catch((err: unknown) => s.log.error({ err, action: d.action, request_id: requestId(req) }, 'audit: entry not recorded'));
}

/**
 * After the session guard: once a POST is answered, records the change its route declares if it was
 * done. Express leaves the matched route (req.route, req.params) on the request after it answered.
 */
export const recordDashboardChanges = (s: ApiServices) => (req: Request, res: Response, next: NextFunction): void => {
  if (req.method === 'POST') res.on('finish', () => afterAnswer(s, req, res));
  next();
};

interface RouteLayer { route?: { path: string; methods: Record<string, boolean> } }

/** Throws (the dashboard does not start) when a POST route added from layer `from` on has no declaration in DASHBOARD_CHANGES. */
export function everyChangeDeclared(router: Router, from: number): void {
  const undeclared = (router.stack as RouteLayer[]).slice(from)
    .flatMap((l) => (l.route?.methods.post && !DASHBOARD_CHANGES[l.route.path] ? [l.route.path] : []));
  if (undeclared.length > 0) throw new Error(`dashboard POST routes without an audit declaration (dashboard/audit.ts): ${undeclared.join(', ')}`);
}
