// Signed in: the endpoint forms of the Webhooks page (CONTRACT.md §11). Adding one and rotating a
// secret run once per form (form-once.ts) and show the new secret once; disabling, deleting and
// rotating are confirmed first (a <dialog> with JavaScript, else a page of the server's own).
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { DomainError } from '../../domain/errors.ts';
import { errorText } from '../refusal.ts';
import * as E from '../webhook-endpoints.ts';
import { BASE } from '../pages/layout.ts';
import { confirmPage } from '../pages/confirm.ts';
import { alreadyDonePage } from '../pages/already-done.ts';
import { NONCE_FIELD, once } from '../form-once.ts';
import { field, keepNonce, locals, nonce, requestId, send } from '../http.ts';

/** A repeated field (checkboxes): every string value sent under `name`. */
function fields(req: Request, name: string): string[] {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string').slice(0, 50);
}

const formOf = (req: Request): E.EndpointForm => ({ url: field(req, 'url'), events: fields(req, 'events'), description: field(req, 'description') });
const endpointId = (req: Request) => String(req.params.endpointId);

/** Renders the Webhooks page (routes/webhooks.ts), with a new secret or a refusal. */
export type RenderWebhooks = (s: ApiServices, req: Request, res: Response, status: number, extra?: { secret?: string; activatesAt?: string | undefined; error?: string }) => Promise<void>;

/** A refusal (a bad URL, an unknown endpoint, the 16 endpoints' limit) shown on the page, with the status the API would answer. */
async function refused(webhooks: RenderWebhooks, s: ApiServices, req: Request, res: Response, err: unknown): Promise<void> {
  if (!(err instanceof DomainError) || !['bad_request', 'not_found', 'limit_exceeded'].includes(err.code)) throw err;
  await webhooks(s, req, res, err.code === 'not_found' ? 404 : 400, { error: errorText(locals(res).t, err) });
}

/** Asks on a page of its own when the form came without `confirmed=yes` (no JavaScript); answers whether it asked. */
function asked(req: Request, res: Response, o: { title: string; question: string; action: string; button: string; fields?: Record<string, string> }): boolean {
  if (field(req, 'confirmed') === 'yes') return false;
  const { session } = locals(res);
  send(res, 200, confirmPage(locals(res), { ...o, fields: o.fields ?? {}, back: `${BASE}/webhooks` }));
  return true;
}

async function add(webhooks: RenderWebhooks, s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  try {
    const r = await once(s, session, nonce(req), `${BASE}/webhooks/endpoints`,
      (id) => E.addEndpoint(s, session, requestId(req), id, formOf(req)), (x) => ({ action: 'endpoint_created', endpoint_id: x.endpoint.id }));
    if (r.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), r.summary));
    // A claim taken over after a crash finds the endpoint made: its secret cannot be shown again.
    if (r.result.signingSecret === null) return webhooks(s, req, res, 200, { error: locals(res).t('dash.error.endpoint_added_before') });
    await webhooks(s, req, res, 201, { secret: r.result.signingSecret });
  } catch (err) {
    await refused(webhooks, s, req, res, err);
  }
}

async function rotate(webhooks: RenderWebhooks, s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  const action = `${BASE}/webhooks/endpoints/${endpointId(req)}/rotate-secret`;
  const after = Number(field(req, 'activate_after_seconds') || '86400');
  const { t } = locals(res);
  if (asked(req, res, {
    title: t('dash.endpoints.rotate_title'), action, button: t('dash.webhooks.rotate'),
    question: t(after > 0 ? 'dash.endpoints.rotate_staged' : 'dash.endpoints.rotate_now'),
    fields: { [NONCE_FIELD]: keepNonce(req), activate_after_seconds: String(after) },
  })) return;
  try {
    const r = await once(s, session, nonce(req), action,
      () => E.rotateEndpoint(s, session, requestId(req), endpointId(req), after), () => ({ action: 'endpoint_secret_rotated', endpoint_id: endpointId(req) }));
    if (r.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), r.summary));
    await webhooks(s, req, res, 200, { secret: r.result.signingSecret, activatesAt: after > 0 ? r.result.activatesAt : undefined });
  } catch (err) {
    await refused(webhooks, s, req, res, err);
  }
}

export function addEndpointRoutes(r: Router, s: ApiServices, webhooks: RenderWebhooks): void {
  r.post('/webhooks/endpoints', can('webhooks:manage'), (req, res) => add(webhooks, s, req, res));
  r.post('/webhooks/endpoints/:endpointId', can('webhooks:manage'), async (req, res) => {
    const { session } = locals(res);
    try {
      await E.editEndpoint(s, session, requestId(req), endpointId(req), formOf(req));
      res.redirect(303, `${BASE}/webhooks?done=endpoint_saved`);
    } catch (err) {
      await refused(webhooks, s, req, res, err);
    }
  });
  r.post('/webhooks/endpoints/:endpointId/status', can('webhooks:manage'), async (req, res) => {
    const { session } = locals(res);
    const status = field(req, 'status') === 'enabled' ? 'enabled' : 'disabled';
    const action = `${BASE}/webhooks/endpoints/${endpointId(req)}/status`;
    const { t } = locals(res);
    if (status === 'disabled' && asked(req, res, { title: t('dash.endpoints.disable_title'), action, button: t('dash.endpoints.disable'), question: t('dash.endpoints.disable_confirm'), fields: { status } })) return;
    try {
      await E.setEndpointStatus(s, session, requestId(req), endpointId(req), status);
      res.redirect(303, `${BASE}/webhooks?done=endpoint_${status}`);
    } catch (err) {
      await refused(webhooks, s, req, res, err);
    }
  });
  r.post('/webhooks/endpoints/:endpointId/delete', can('webhooks:manage'), async (req, res) => {
    const { session } = locals(res);
    const action = `${BASE}/webhooks/endpoints/${endpointId(req)}/delete`;
    const { t } = locals(res);
    if (asked(req, res, { title: t('dash.endpoints.delete_title'), action, button: t('dash.endpoints.delete'), question: t('dash.endpoints.delete_confirm') })) return;
    try {
      await E.removeEndpoint(s, session, requestId(req), endpointId(req));
      res.redirect(303, `${BASE}/webhooks?done=endpoint_deleted`);
    } catch (err) {
      await refused(webhooks, s, req, res, err);
    }
  });
  r.post('/webhooks/endpoints/:endpointId/rotate-secret', can('webhooks:manage'), (req, res) => rotate(webhooks, s, req, res));
}
