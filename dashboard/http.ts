// What every dashboard route reads from a request and how it answers: form fields and query values
// (bounded, strings only), the session the guard put on the response, and an HTML page sent.
import type { Request, Response } from 'express';
import type { Html } from '../infra/html.ts';
import type { Session } from './session.ts';
import type { Speech } from './language.ts';
import type { MessageKey } from '../i18n/catalogue.ts';
import { NONCE_FIELD, newNonce, validNonce } from './form-once.ts';
import { isStorableText } from '../api/storable-text.ts';

/** Messages after a redirect, by code: nothing from the request is ever shown as text. */
const DONE: Record<string, MessageKey> = {
  revoked: 'dash.done.revoked',
  test_sent: 'dash.done.test_sent',
  redelivered: 'dash.done.redelivered',
  endpoint_saved: 'dash.done.endpoint_saved',
  endpoint_enabled: 'dash.done.endpoint_enabled',
  endpoint_disabled: 'dash.done.endpoint_disabled',
  endpoint_deleted: 'dash.done.endpoint_deleted',
  test_sent_before: 'dash.done.test_sent_before',
  refunded: 'dash.done.refunded',
  redelivered_before: 'dash.done.redelivered_before',
  password_set: 'dash.done.password_set',
  signed_out: 'dash.done.signed_out',
  expired: 'dash.done.expired',
  link_created: 'dash.done.link_created',
  link_deactivated: 'dash.done.link_deactivated',
  role_changed: 'team.done.role_changed',
  role_same: 'team.done.role_same',
  member_removed: 'team.done.member_removed',
  session_ended: 'team.done.session_ended',
  others_ended: 'team.done.others_ended',
};

/** What a signed-in page is rendered with: the session and the page's language (language.ts). */
export type View = Speech & { session: Session };
/** What the dashboard keeps on `res.locals`: the page's language (language.ts), the signed-in session (guards.ts) and whether cookies are Secure. */
export type Locals = View & { secure: boolean };
export const locals = (res: Response) => res.locals as unknown as Locals;
export const requestId = (req: Request) => String((req as Request & { id?: string }).id ?? '');
/** A posted field; text the database cannot store (a NUL: a 500 once it reached an event) reads as nothing, so the form refuses it as missing. */
export const field = (req: Request, name: string): string => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' && isStorableText(v) ? v : '';
};
/** A query value; text the database cannot take (a NUL: a 500 once it reached a search) reads as nothing, as an absent filter. */
export const query = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' && isStorableText(v) ? v.slice(0, 500) : undefined;
};
/** The message for `?done=`, in the page's language. */
export const done = (req: Request, res: Response): string | undefined => {
  const key = DONE[query(req, 'done') ?? ''];
  return key === undefined ? undefined : locals(res).t(key);
};
/** The form's one-time nonce (form-once.ts). */
export const nonce = (req: Request) => field(req, NONCE_FIELD);
/** The nonce a confirmation page carries over: the form's own, so confirming twice still runs once. */
export const keepNonce = (req: Request) => (validNonce(nonce(req)) ? nonce(req) : newNonce());

export function send(res: Response, status: number, body: Html): void {
  res.status(status).type('html').send(body.value);
}
