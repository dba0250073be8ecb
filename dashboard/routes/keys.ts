// Signed in: the merchant's API keys: the list, one key, and creating, rotating (after a
// confirmation) and revoking (after a confirmation) one. A new secret is shown once, on the answer.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { Refusal } from '../refusal.ts';
import * as D from '../data.ts';
import * as A from '../actions.ts';
import { BASE } from '../pages/layout.ts';
import { keyPage, keysPage } from '../pages/keys.ts';
import { scopesFromForm } from '../key-scopes.ts';
import { confirmPage } from '../pages/confirm.ts';
import { alreadyDonePage } from '../pages/already-done.ts';
import { NONCE_FIELD, once } from '../form-once.ts';
import { done, field, keepNonce, locals, nonce, requestId, send } from '../http.ts';

async function keyOr404(s: ApiServices, req: Request, res: Response) {
  const key = await D.keyOf(s, locals(res).session.merchantId, String(req.params.keyId));
  if (!key) throw new Refusal('dash.error.key_not_found', {}, 'not_found');
  return key;
}

async function createKey(s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  const days = Number(field(req, 'expires_in_days') || '0');
  if (!A.EXPIRY_CHOICES.some((e) => e.days === days)) throw new Refusal('dash.error.expiry_choice');
  const scopes = scopesFromForm(req);
  const created = await once(s, session, nonce(req), `${BASE}/keys`,
    () => A.createKey(s, session, requestId(req), days, scopes),
    (c) => ({ action: 'key_created', key_id: c.key.id, api_key: c.key.api_key }));
  if (created.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), created.summary));
  send(res, 201, keysPage(locals(res), await D.keysOf(s, session.merchantId), { revealed: created.result }));
}

async function rotateKey(s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  const key = await keyOr404(s, req, res);
  const grace = Number(field(req, 'grace_seconds') || '0');
  if (!A.GRACE_CHOICES.some((g) => g.seconds === grace)) throw new Refusal('dash.error.grace_choice');
  if (field(req, 'confirmed') !== 'yes') {
    const { t } = locals(res);
    const choice = t(A.GRACE_CHOICES.find((g) => g.seconds === grace)!.label);
    return send(res, 200, confirmPage(locals(res), {
      title: t('dash.keys.rotate_title'), question: t('dash.keys.rotate_confirm', { key: key.api_key, when: choice }),
      action: `${BASE}/keys/${key.id}/rotate`, button: t('dash.keys.rotate'), fields: { grace_seconds: String(grace), [NONCE_FIELD]: keepNonce(req) }, back: `${BASE}/keys`,
    }));
  }
  const rotated = await once(s, session, nonce(req), `${BASE}/keys/${key.id}/rotate`,
    () => A.rotateKey(s, session, requestId(req), key.id, grace),
    (r) => ({ action: 'key_rotated', key_id: r.key.id, api_key: r.key.api_key }));
  if (rotated.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), rotated.summary));
  send(res, 201, keysPage(locals(res), await D.keysOf(s, session.merchantId), { revealed: { ...rotated.result, rotated: true } }));
}

async function revokeKey(s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session } = locals(res);
  const key = await keyOr404(s, req, res);
  if (field(req, 'confirmed') !== 'yes') {
    const { t } = locals(res);
    return send(res, 200, confirmPage(locals(res), {
      title: t('dash.keys.revoke_title'), question: t('dash.keys.revoke_confirm', { key: key.api_key }),
      action: `${BASE}/keys/${key.id}/revoke`, button: t('dash.keys.revoke'), fields: {}, back: `${BASE}/keys`,
    }));
  }
  await A.revokeKey(s, session, requestId(req), key.id);
  res.redirect(303, `${BASE}/keys?done=revoked`);
}

export function addKeyRoutes(r: Router, s: ApiServices): void {
  r.get('/keys', can('keys:read'), async (req, res) => {
    const { session } = locals(res);
    send(res, 200, keysPage(locals(res), await D.keysOf(s, session.merchantId), { info: done(req, res) }));
  });
  r.post('/keys', can('keys:manage'), (req, res) => createKey(s, req, res));
  r.get('/keys/:keyId', can('keys:read'), async (req, res) => {
    send(res, 200, keyPage(locals(res), await keyOr404(s, req, res)));
  });
  r.post('/keys/:keyId/rotate', can('keys:manage'), (req, res) => rotateKey(s, req, res));
  r.post('/keys/:keyId/revoke', can('keys:manage'), (req, res) => revokeKey(s, req, res));
}
