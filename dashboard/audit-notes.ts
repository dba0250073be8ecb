// What a dashboard request's one-time form (form-once.ts) did, for its audit entry (audit.ts): the
// summary of a change that ran, by the request's session object. Each request reads its own Session
// object from the database (guards.ts), so the object stands for the request; a WeakMap lets it go
// with the request.
import type { Session } from './session.ts';

/** form-once.ts's Summary: ids and labels, never a secret. */
type Summary = Record<string, string>;
const ran = new WeakMap<Session, Summary>();

/** Called by once() when the form's change ran (not for a repeat of a form already used). */
export function noteFormRan(session: Session, summary: Summary): void {
  ran.set(session, summary);
}

/** The summary of the change this request's form ran, if it ran one. */
export const formRan = (session: Session): Summary | undefined => ran.get(session);
