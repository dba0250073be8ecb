// Signed in: the merchant's payment links (CONTRACT §16): the list and the create form, one link with
// its address, QR code and payins, and deactivating one. Creating runs once per form (form-once.ts:
// the form's claim id is the link's id, so a claim taken over after a crash finds the link it made);
// deactivating is confirmed first (a <dialog> with JavaScript, else a page of the server's own).
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { DomainError } from '../../domain/errors.ts';
import * as D from '../data.ts';
import * as L from '../payment-links.ts';
import { Refusal } from '../refusal.ts';
import { BASE } from '../pages/layout.ts';
import { linkPage, linkPath, linksPage } from '../pages/payment-links.ts';
import { confirmPage } from '../pages/confirm.ts';
import { alreadyDonePage } from '../pages/already-done.ts';
import { NONCE_FIELD, once } from '../form-once.ts';
import { done, field, keepNonce, locals, nonce, query, requestId, send } from '../http.ts';

const reached = (req: Request): L.Reached => ({ requestId: requestId(req), host: req.header('host') });

const formOf = (req: Request): L.LinkForm => ({
  amount: field(req, 'amount').slice(0, 20), currency: field(req, 'currency'), description: field(req, 'description').slice(0, 600),
  expires: field(req, 'expires').slice(0, 20), maxPayments: field(req, 'max_payments').slice(0, 20),
});

async function listLinks(s: ApiServices, req: Request, res: Response, status = 200, o: { form?: L.LinkForm; error?: string } = {}): Promise<void> {
  const v = locals(res);
  const page = await L.linksOf(s, v.session.merchantId, reached(req), query(req, 'cursor'));
  send(res, status, linksPage(v, page.data, page.next_cursor, o));
}

async function create(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const form = formOf(req);
  try {
    const made = await once(s, v.session, nonce(req), `${BASE}/links`,
      (linkId) => L.createLink(s, v.session, requestId(req), linkId, form), (id) => ({ action: 'link_created', link_id: id }));
    if (made.kind === 'repeat') return send(res, 409, alreadyDonePage(v, made.summary));
    res.redirect(303, `${linkPath(made.result)}?done=link_created`);
  } catch (err) {
    // A refused field: the form again, as typed, with what to change (nothing was created).
    if (!(err instanceof DomainError) || err.code === 'not_found' || err instanceof Refusal) throw err;
    await listLinks(s, req, res, 400, { form, error: L.linkRefusal(v.t, err) });
  }
}

async function linkOr404(s: ApiServices, req: Request, res: Response): Promise<Record<string, any>> {
  const link = await L.linkOf(s, locals(res).session.merchantId, reached(req), String(req.params.linkId));
  if (!link) throw new Refusal('dash.error.link_not_found', {}, 'not_found');
  return link;
}

async function show(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const link = await linkOr404(s, req, res);
  const payins = await L.linkPayins(s, v.session.merchantId, reached(req), link.id);
  const names = await D.customerNamesOf(s, v.session.merchantId, payins.map((p) => p.customer_id));
  send(res, 200, linkPage(v, link, payins, names, done(req, res)));
}

async function deactivate(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const link = await linkOr404(s, req, res);
  const action = `${linkPath(link.id)}/deactivate`;
  if (field(req, 'confirmed') !== 'yes') {
    return send(res, 200, confirmPage(v, {
      title: v.t('dash.links.deactivate_title'), question: v.t('dash.links.deactivate_question'), action,
      button: v.t('dash.links.deactivate'), fields: { [NONCE_FIELD]: keepNonce(req) }, back: linkPath(link.id),
    }));
  }
  const r = await once(s, v.session, nonce(req), action,
    () => L.deactivateLink(s, v.session, requestId(req), link.id), () => ({ action: 'link_deactivated', link_id: link.id }));
  if (r.kind === 'repeat') return send(res, 409, alreadyDonePage(v, r.summary));
  res.redirect(303, `${linkPath(link.id)}?done=link_deactivated`);
}

export function addPaymentLinkRoutes(r: Router, s: ApiServices): void {
  r.get('/links', can('payment_links:read'), (req, res) => listLinks(s, req, res));
  r.post('/links', can('payment_links:manage'), (req, res) => create(s, req, res));
  r.get('/links/:linkId', can('payment_links:read'), (req, res) => show(s, req, res));
  r.post('/links/:linkId/deactivate', can('payment_links:manage'), (req, res) => deactivate(s, req, res));
}
