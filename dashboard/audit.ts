// The dashboard's audit log (CONTRACT §18): every signed-in POST declares below the action it
// records, its target, and what answer means it was done; the dashboard refuses to start when a
// signed-in POST route has no declaration (everyChangeDeclared), so a new form cannot be forgotten.
// A change that was done is recorded with the member as its actor (commands/audit-log.ts) before its
// answer is sent. A refused form (4xx), a confirmation page, a form sent again (form-once.ts), a form
// that changed nothing or a failure records nothing.
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
 * What answer says the change was done: `once`, the one-time form's change ran to its end
 * (form-once.ts; not a repeat, not a confirmation page, not a refusal); `{ done }`, a 303 whose `?done=` code is
 * one of these (the message the page shows after the change: a confirmation page is a 200, a form
 * that changed nothing redirects without one, or with another); 200, that answer.
 */
type Done = 'once' | 200 | { done: string[] };
const redirect = (...done: string[]): Done => ({ done });

interface DeclaredChange { action: AuditAction; target: { type: string; id: TargetId }; done: Done }

const change = (action: AuditAction, type: string, id: TargetId, done: Done): DeclaredChange => ({ action, target: { type, id }, done });

/** Every signed-in POST route, by its path as the router has it. */
export const DASHBOARD_CHANGES: Record<string, DeclaredChange> = {
  '/sign-out': change('session.signed_out', 'dashboard_user', 'member', redirect('signed_out')),
  '/keys': change('api_key.created', 'api_key', { summary: 'key_id' }, 'once'),
  '/keys/:keyId/rotate': change('api_key.rotated', 'api_key', { param: 'keyId' }, 'once'),
  '/keys/:keyId/revoke': change('api_key.revoked', 'api_key', { param: 'keyId' }, redirect('revoked')),
  '/webhooks': change('webhook.url_set', 'merchant', 'merchant', 'once'),
  '/webhooks/rotate-secret': change('webhook.secret_rotated', 'merchant', 'merchant', 'once'),
  '/webhooks/test': change('webhook.test_sent', 'webhook_test', { summary: 'test_id' }, 'once'),
  '/webhooks/endpoints': change('webhook_endpoint.created', 'webhook_endpoint', { summary: 'endpoint_id' }, 'once'),
  '/webhooks/endpoints/:endpointId': change('webhook_endpoint.updated', 'webhook_endpoint', { param: 'endpointId' }, redirect('endpoint_saved')),
  '/webhooks/endpoints/:endpointId/status': change('webhook_endpoint.status_set', 'webhook_endpoint', { param: 'endpointId' }, redirect('endpoint_enabled', 'endpoint_disabled')),
  '/webhooks/endpoints/:endpointId/delete': change('webhook_endpoint.deleted', 'webhook_endpoint', { param: 'endpointId' }, redirect('endpoint_deleted')),
  '/webhooks/endpoints/:endpointId/rotate-secret': change('webhook_endpoint.secret_rotated', 'webhook_endpoint', { param: 'endpointId' }, 'once'),
  '/events/:eventId/redeliver': change('event.redelivery_requested', 'event', { param: 'eventId' }, 'once'),
  '/payins/:id/refunds': change('refund.created', 'refund', { summary: 'refund_id' }, 'once'),
  '/links': change('payment_link.created', 'payment_link', { summary: 'link_id' }, 'once'),
  '/links/:linkId/deactivate': change('payment_link.deactivated', 'payment_link', { param: 'linkId' }, 'once'),
  '/team/invite': change('dashboard_user.invited', 'dashboard_user', { summary: 'member_id' }, 'once'),
  '/team/:memberId/role': change('dashboard_user.role_changed', 'dashboard_user', { param: 'memberId' }, redirect('role_changed')),
  '/team/:memberId/remove': change('dashboard_user.removed', 'dashboard_user', { param: 'memberId' }, redirect('member_removed')),
  '/sessions/end-others': change('session.others_ended', 'dashboard_user', 'member', redirect('others_ended')),
  '/sessions/:publicId/end': change('session.ended', 'session', { param: 'publicId' }, redirect('session_ended', 'signed_out')),
  '/two-factor/enrol': change('two_factor.enrolled', 'dashboard_user', 'member', 200),
  '/two-factor/disable': change('two_factor.disabled', 'dashboard_user', 'member', redirect('disabled')),
  '/two-factor/require': change('two_factor.requirement_set', 'merchant', 'merchant', redirect('required_on', 'required_off')),
};

/** The `done` code of a redirect's Location (`/dashboard/keys?done=revoked` → revoked). */
function doneCode(res: Response): string | null {
  const location = res.getHeader('location');
  return typeof location === 'string' ? new URL(location, 'http://dashboard.invalid').searchParams.get('done') : null;
}

function wasDone(d: DeclaredChange, session: Session, res: Response): boolean {
  // The form's change completed (once() notes it only then), whatever the page after it answers.
  if (d.done === 'once') return formRan(session) !== undefined;
  if (d.done === 200) return res.statusCode === 200;
  return res.statusCode === 303 && d.done.done.includes(doneCode(res) ?? '');
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

/** The change the answer about to be sent says was done, if its route declares one. */
function doneChange(req: Request, res: Response): { d: DeclaredChange; session: Session } | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  const d = typeof path === 'string' ? DASHBOARD_CHANGES[path] : undefined;
  const session = (res.locals as Partial<ReturnType<typeof locals>>).session;
  return d && session && wasDone(d, session, res) ? { d, session } : undefined;
}

/**
 * After the session guard: a POST's answer is held when it is about to be sent (res.end, which every
 * page and redirect ends with) until the change its route declares, if it was done, is recorded; so
 * an answered change is listed, as on the operator API. A lost entry is said loudly
 * (docs/AUDIT-LOG.md), never turned into a failed answer: the change is made.
 */
export const recordDashboardChanges = (s: ApiServices) => (req: Request, res: Response, next: NextFunction): void => {
  if (req.method !== 'POST') return next();
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const done = doneChange(req, res);
    if (!done) return end(...args);
    record(s, done.d, req, done.session)
      .catch((err: unknown) => s.log.error({ err, action: done.d.action, request_id: requestId(req) }, 'audit: entry not recorded'))
      .finally(() => end(...args));
    return res;
  }) as Response['end'];
  next();
};

interface RouteLayer { route?: { path: string; methods: Record<string, boolean> } }

/** Throws (the dashboard does not start) when a POST route added from layer `from` on has no declaration in DASHBOARD_CHANGES. */
export function everyChangeDeclared(router: Router, from: number): void {
  const undeclared = (router.stack as RouteLayer[]).slice(from)
    .flatMap((l) => (l.route?.methods.post && !DASHBOARD_CHANGES[l.route.path] ? [l.route.path] : []));
  if (undeclared.length > 0) throw new Error(`dashboard POST routes without an audit declaration (dashboard/audit.ts): ${undeclared.join(', ')}`);
}
