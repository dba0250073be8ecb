// The dashboard's last handlers: a page for a path that matched nothing, and one for an error
// (a not-found or refused action shows its message; anything else is logged and shown as a 500).
import type { NextFunction, Request, Response } from 'express';
import type { ApiServices } from '../api/services.ts';
import { DomainError } from '../domain/errors.ts';
import { BASE, page, publicPage } from './pages/layout.ts';
import { html } from './html.ts';
import { requestId, send, type Locals } from './http.ts';

export function notFound(_req: Request, res: Response): void {
  const session = (res.locals as Partial<Locals>).session;
  const body = html`<p>There is no such page.</p><p><a href="${BASE}">Dashboard home</a></p>`;
  send(res, 404, session ? page(session, 'Not found', '', body) : publicPage('Not found', body));
}

export const errorPage = (s: ApiServices) => (err: unknown, req: Request, res: Response, next: NextFunction): void => {
  if (res.headersSent) return next(err);
  const session = (res.locals as Partial<Locals>).session;
  const wrap = (title: string, text: string) => {
    const body = html`<p>${text}</p><p><a href="${BASE}">Dashboard home</a></p>`;
    return session ? page(session, title, '', body) : publicPage(title, body);
  };
  if (err instanceof DomainError && (err.code === 'not_found' || err.code === 'bad_request')) {
    return send(res, err.code === 'not_found' ? 404 : 400, wrap(err.code === 'not_found' ? 'Not found' : 'Not done', err.message));
  }
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return send(res, 413, wrap('Refused', 'That form is too large.'));
  if (e?.status && e.status >= 400 && e.status < 500) return send(res, 400, wrap('Refused', 'The request could not be read.'));
  s.log.error({ err, request_id: requestId(req) }, 'dashboard: unhandled error');
  send(res, 500, wrap('Something went wrong', 'The page could not be shown. Try again in a moment.'));
};
