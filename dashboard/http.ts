// What every dashboard route reads from a request and how it answers: form fields and query values
// (bounded, strings only), the session the guard put on the response, and an HTML page sent.
import type { Request, Response } from 'express';
import type { Html } from './html.ts';
import type { Session } from './session.ts';
import { NONCE_FIELD, newNonce, validNonce } from './form-once.ts';

/** Messages after a redirect, by code: nothing from the request is ever shown as text. */
const DONE: Record<string, string> = {
  revoked: 'The key is revoked: requests made with it are refused from now on.',
  test_sent: 'Test event sent. It appears in the event log within a few seconds, with each delivery attempt.',
  redelivered: 'Redelivery asked for: the attempt runs now and appears below (reload the page in a moment).',
  endpoint_saved: 'Endpoint saved: the next events go to it as it is now.',
  endpoint_enabled: 'Endpoint enabled: it receives the events its filter names from now on.',
  endpoint_disabled: 'Endpoint disabled: it is sent nothing until you enable it again.',
  endpoint_deleted: 'Endpoint deleted: it is sent nothing more.',
  test_sent_before: 'This form had already sent its test event: no other was sent. It is in the event log.',
  refunded: 'Refund created: it is pending with the provider and appears below with its status.',
  redelivered_before: 'This form had already asked for a redelivery: no other attempt was added.',
  password_set: 'Your password is set. Sign in with your e-mail address and the new password.',
  signed_out: 'You are signed out.',
  expired: 'Your session has ended. Sign in again.',
};

/** What the dashboard keeps on `res.locals`: the signed-in session (guards.ts) and whether cookies are Secure. */
export type Locals = { session: Session; secure: boolean };
export const locals = (res: Response) => res.locals as unknown as Locals;
export const requestId = (req: Request) => String((req as Request & { id?: string }).id ?? '');
export const field = (req: Request, name: string): string => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
export const query = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v.slice(0, 500) : undefined;
};
export const done = (req: Request) => DONE[query(req, 'done') ?? ''];
/** The form's one-time nonce (form-once.ts). */
export const nonce = (req: Request) => field(req, NONCE_FIELD);
/** The nonce a confirmation page carries over: the form's own, so confirming twice still runs once. */
export const keepNonce = (req: Request) => (validNonce(nonce(req)) ? nonce(req) : newNonce());

export function send(res: Response, status: number, body: Html): void {
  res.status(status).type('html').send(body.value);
}
