// How a payer's page answers: the whole HTML page, or (the page's script asked for JSON, to show it
// without a reload) the same page's title and <main> as JSON, plus where the browser now is.
import type { Request, Response } from 'express';
import type { Speech } from './language.ts';
import { wantsJson } from './guards.ts';
import { BASE, document, messageView, type View } from './pages/layout.ts';
import type { MessageKey } from '../i18n/catalogue.ts';

export function sendView(req: Request, res: Response, sp: Speech, status: number, view: View, location?: string): void {
  if (wantsJson(req)) {
    res.status(status).json({ title: view.title, html: view.main.value, ...(location ? { location } : {}) });
    return;
  }
  res.status(status).type('html').send(document(sp, view).value);
}

/** A page that says one thing, from two catalogue keys. */
export function sendMessage(req: Request, res: Response, sp: Speech, status: number, title: MessageKey, text: string, path: string): void {
  sendView(req, res, sp, status, messageView(sp.t(title), text, path));
}

/** The same answer for every id that is not a link (or not this link's payin): it reveals nothing. */
export function sendNotFound(req: Request, res: Response, sp: Speech): void {
  sendMessage(req, res, sp, 404, 'pay.not_found.title', sp.t('pay.not_found.text'), pathOf(req));
}

/** The request's own path for the language link, when it is plainly one of ours (never `//elsewhere`). */
export function pathOf(req: Request): string {
  const path = `${req.baseUrl}${req.path}`;
  return /^\/pay(\/[A-Za-z0-9_-]+){0,3}$/.test(path) ? path : BASE;
}
