// Signed in: the merchant's webhooks: its endpoints (CONTRACT.md §11: add, edit, enable/disable,
// delete, staged rotation; a new secret shown once), the first endpoint's URL (setting it shows the
// signing secret once), rotating that one's secret at once (after a confirmation), and a test event.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { DomainError } from '../../domain/errors.ts';
import { Refusal, errorText } from '../refusal.ts';
import * as D from '../data.ts';
import * as A from '../actions.ts';
import { endpointsOf } from '../../commands/webhook-endpoints.ts';
import { filterableEvents } from '../../domain/webhook-endpoints.ts';
import { addEndpointRoutes } from './webhook-endpoints.ts';
import { BASE } from '../pages/layout.ts';
import { webhooksPage } from '../pages/webhooks.ts';
import { confirmPage } from '../pages/confirm.ts';
import { alreadyDonePage } from '../pages/already-done.ts';
import { NONCE_FIELD, once } from '../form-once.ts';
import { done, field, keepNonce, locals, nonce, requestId, send } from '../http.ts';

/** The webhooks page: the URL and the ten latest events, with what the form just did. */
async function webhooks(
  s: ApiServices, req: Request, res: Response, status: number, extra: { secret?: string; activatesAt?: string | undefined; error?: string; typedUrl?: string } = {},
) {
  const { session } = locals(res);
  const [endpoints, recent] = await Promise.all([endpointsOf(s, session.merchantId), D.eventsOf(s, session.merchantId, { limit: 10 })]);
  const url = endpoints[0]?.url ?? null;
  send(res, status, webhooksPage(locals(res), {
    url, endpoints, eventNames: filterableEvents(), recent: recent.data, info: done(req, res), allowPrivateUrls: s.config.allowPrivateUrls, ...extra,
  }));
}

async function setUrl(s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  const url = field(req, 'url').trim();
  try {
    if (url === '' || url.length > 2000) throw new Refusal('dash.error.url_length');
    const r2 = await once(s, session, nonce(req), `${BASE}/webhooks`,
      () => A.setWebhookUrl(s, session, requestId(req), url), () => ({ action: 'webhook_set' }));
    if (r2.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), r2.summary));
    await webhooks(s, req, res, 200, { secret: r2.result.signingSecret });
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'bad_request') throw err;
    await webhooks(s, req, res, 400, { error: errorText(locals(res).t, err), typedUrl: url.slice(0, 2000) });
  }
}

async function rotateSecret(s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  if (field(req, 'confirmed') !== 'yes') {
    const { t } = locals(res);
    return send(res, 200, confirmPage(locals(res), {
      title: t('dash.webhooks.rotate_title'), question: t('dash.webhooks.rotate_confirm'),
      action: `${BASE}/webhooks/rotate-secret`, button: t('dash.webhooks.rotate'), fields: { [NONCE_FIELD]: keepNonce(req) }, back: `${BASE}/webhooks`,
    }));
  }
  const r2 = await once(s, session, nonce(req), `${BASE}/webhooks/rotate-secret`,
    () => A.rotateWebhookSecret(s, session, requestId(req)), () => ({ action: 'webhook_secret_rotated' }));
  if (r2.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), r2.summary));
  await webhooks(s, req, res, 200, { secret: r2.result.signingSecret });
}

export function addWebhookRoutes(r: Router, s: ApiServices): void {
  r.get('/webhooks', can('webhooks:read'), (req, res) => webhooks(s, req, res, 200));
  r.post('/webhooks', can('webhooks:manage'), (req, res) => setUrl(s, req, res));
  r.post('/webhooks/rotate-secret', can('webhooks:manage'), (req, res) => rotateSecret(s, req, res));
  addEndpointRoutes(r, s, webhooks);
  r.post('/webhooks/test', can('webhooks:manage'), async (req, res) => {
    const { session } = locals(res);
    const sent = await once(s, session, nonce(req), `${BASE}/webhooks/test`,
      (testId) => A.sendTestEvent(s, session, requestId(req), testId), (testId) => ({ action: 'test_sent', test_id: testId }));
    res.redirect(303, `${BASE}/webhooks?done=${sent.kind === 'first' ? 'test_sent' : 'test_sent_before'}`);
  });
}
