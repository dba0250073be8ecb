// The dashboard's last handlers: a page for a path that matched nothing, and one for an error
// (a not-found or refused action shows its message; anything else is logged and shown as a 500),
// in the page's language.
import type { NextFunction, Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { DomainError } from '../domain/errors.ts';
import { BASE, page, publicPage } from './pages/layout.ts';
import { html } from '../infra/html.ts';
import { requestId, send, type Locals } from './http.ts';
import { errorText } from './refusal.ts';

/** The page shell for a message: the signed-in one when there is a session. */
function wrap(res: Response, title: string, text: string) {
  const v = res.locals as Locals;
  const body = html`<p>${text}</p><p><a href="${BASE}">${v.t('dash.home_link')}</a></p>`;
  return (res.locals as Partial<Locals>).session ? page(v, title, '', body) : publicPage(v, title, body);
}

export function notFound(_req: Request, res: Response): void {
  const { t } = res.locals as Locals;
  send(res, 404, wrap(res, t('dash.error.not_found'), t('dash.error.no_such_page')));
}

export const errorPage = (s: ApiServices) => (err: unknown, req: Request, res: Response, next: NextFunction): void => {
  if (res.headersSent) return next(err);
  const { t } = res.locals as Locals;
  if (err instanceof DomainError && (err.code === 'not_found' || err.code === 'bad_request')) {
    const notFound = err.code === 'not_found';
    return send(res, notFound ? 404 : 400, wrap(res, t(notFound ? 'dash.error.not_found' : 'dash.error.not_done'), errorText(t, err)));
  }
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return send(res, 413, wrap(res, t('dash.error.refused'), t('dash.error.too_large')));
  if (e?.status && e.status >= 400 && e.status < 500) return send(res, 400, wrap(res, t('dash.error.refused'), t('dash.error.unreadable')));
  s.log.error({ err, request_id: requestId(req) }, 'dashboard: unhandled error');
  send(res, 500, wrap(res, t('dash.error.failed_title'), t('dash.error.failed')));
};
