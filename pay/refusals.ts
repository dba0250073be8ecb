// The payer's page's refusals, each a page in the page's language (or its JSON for the script): too
// many requests (429 with Retry-After), a form from another site (403), a form that cannot be read
// (415, 413, 400), and anything unexpected (500, logged; no internals shown).
import type { NextFunction, Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { speechOf } from './language.ts';
import { pathOf, sendMessage } from './answer.ts';
import type { PayLimits } from './limits.ts';
import { sentFromOurPage } from './guards.ts';

export function tooMany(req: Request, res: Response, waitSeconds: number): void {
  const sp = speechOf(res);
  res.setHeader('Retry-After', String(waitSeconds));
  sendMessage(req, res, sp, 429, 'pay.rate_limited.title', sp.t('pay.rate_limited.text', { seconds: waitSeconds }), pathOf(req));
}

/** Every request counts against its client address. */
export const limitRequests = (limits: PayLimits) => (req: Request, res: Response, next: NextFunction): void => {
  const wait = limits.request(req, Date.now());
  if (wait > 0) return tooMany(req, res, wait);
  next();
};

/** A POST must come from the page itself, as a form (the script sends the same form). */
export const formsFromOurPage = (s: ApiServices) => (req: Request, res: Response, next: NextFunction): void => {
  if (req.method !== 'POST') return next();
  const sp = speechOf(res);
  if (!sentFromOurPage(req, s.config.providers.publicBaseUrl)) {
    return sendMessage(req, res, sp, 403, 'pay.refused.title', sp.t('pay.refused.other_site'), pathOf(req));
  }
  if (!req.is('application/x-www-form-urlencoded')) {
    return sendMessage(req, res, sp, 415, 'pay.refused.title', sp.t('pay.refused.unreadable'), pathOf(req));
  }
  next();
};

export const errorPage = (s: ApiServices) => (err: unknown, req: Request, res: Response, next: NextFunction): void => {
  if (res.headersSent) return next(err);
  const sp = speechOf(res);
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return sendMessage(req, res, sp, 413, 'pay.refused.title', sp.t('pay.refused.unreadable'), pathOf(req));
  if (e?.status && e.status >= 400 && e.status < 500) return sendMessage(req, res, sp, 400, 'pay.refused.title', sp.t('pay.refused.unreadable'), pathOf(req));
  s.log.error({ err, request_id: String((req as Request & { id?: string }).id ?? '') }, 'payer page: unhandled error');
  sendMessage(req, res, sp, 500, 'pay.failed_page.title', sp.t('pay.failed_page.text'), pathOf(req));
};
