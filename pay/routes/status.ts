// GET /pay/{id}/payments/{payin_id}: the payment's status page (reloads itself without JavaScript
// until final). GET …/status: the same section as JSON, for the page's script's short poll. Only a
// payin made through that link is shown: any other id is the same 404 as an unknown link.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { speechOf } from '../language.ts';
import { readLink, readPayinOfLink } from '../reads.ts';
import { isFinal, statusSection, statusView } from '../pages/status.ts';
import { sendNotFound, sendView } from '../answer.ts';

async function found(s: ApiServices, req: Request) {
  const link = await readLink(s, String(req.params.id));
  const payin = link ? await readPayinOfLink(s, link, String(req.params.payinId)) : undefined;
  return link && payin ? { link, payin } : undefined;
}

async function statusPage(s: ApiServices, req: Request, res: Response): Promise<void> {
  const sp = speechOf(res);
  const it = await found(s, req);
  if (!it) return sendNotFound(req, res, sp);
  sendView(req, res, sp, 200, statusView(sp, it.link, it.payin));
}

async function statusJson(s: ApiServices, req: Request, res: Response): Promise<void> {
  const it = await found(s, req);
  if (!it) {
    res.status(404).json({ status: 'not_found', final: true });
    return;
  }
  const { title, inner } = statusSection(speechOf(res), it.link, it.payin);
  res.json({ status: it.payin.status, final: isFinal(it.payin), title, html: inner.value });
}

export function addStatusRoutes(r: Router, s: ApiServices): void {
  r.get('/:id/payments/:payinId', (req, res) => statusPage(s, req, res));
  r.get('/:id/payments/:payinId/status', (req, res) => statusJson(s, req, res));
}
