// One-time form nonces. A dashboard form whose effect must not happen twice (create or rotate a
// secret, set the webhook URL, send a test event, redeliver) carries a random nonce. The first POST
// with it claims it in the service's idempotency store (commands/idempotency.ts) under a key derived
// from the session and the nonce; a second POST with it (the browser's "Resend" on reload, a double
// click, Back then submit) gets the first outcome's summary and the effect is not repeated. The
// summary never holds a secret: a secret is shown in the first answer only.
import { createHash, randomBytes, type UUID } from 'node:crypto';
import type { ApiServices } from '../api/services.ts';
import { DomainError } from '../domain/errors.ts';
import { requestHash, unkeyedRequestHash, type Claim } from '../commands/idempotency.ts';
import type { Session } from './session.ts';
import { Refusal } from './refusal.ts';
import { noteFormRan } from './audit-notes.ts';

export const NONCE_FIELD = 'form_nonce';

/** 16 random bytes, base64url (22 characters). */
export const newNonce = () => randomBytes(16).toString('base64url');
export const validNonce = (v: string) => /^[A-Za-z0-9_-]{22}$/.test(v);

/** What a repeat may show: ids and labels, never a secret. */
export type Summary = Record<string, string>;

export type Once<R> = { kind: 'first'; result: R } | { kind: 'repeat'; summary: Summary };

/** How long a repeat waits for the first POST (a double click) before answering "still running". */
const WAIT_MS = 10_000;
const POLL_MS = 100;

/** The idempotency key: the session's id hash and the nonce, so a nonce means nothing in another session. */
const keyOf = (session: Session, nonce: string) =>
  `dashboard-form:${createHash('sha256').update(`${session.idHash}\n${nonce}`).digest('base64url')}`;

async function claim(s: ApiServices, session: Session, key: string, action: string): Promise<Claim> {
  const hash = requestHash(s.secrets, 'POST', action, {});
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      return await s.idempotency.claim(session.merchantId, key, 'POST', action, hash, () => unkeyedRequestHash('POST', action, {}));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      // The same nonce on another form: it was used, and that form's effect is not ours to repeat.
      if (err.code === 'idempotency_conflict') return { kind: 'replay', status: 409, body: { action: 'other' } };
      if (err.code !== 'idempotency_in_progress') throw err;
      if (Date.now() >= deadline) throw new Refusal('dash.error.still_running');
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

/**
 * Runs `run` once per (session, nonce). `run` gets the claim's resource id (the same if a claim left
 * by a crashed process is taken over), to use as the id of what it creates where it can.
 * A failure gives the claim up without an outcome: the same form may be sent again, and runs under
 * the same resource id.
 */
export async function once<R>(
  s: ApiServices, session: Session, nonce: string, action: string,
  run: (resourceId: UUID) => Promise<R>, summarise: (result: R) => Summary,
): Promise<Once<R>> {
  if (!validNonce(nonce)) throw new Refusal('dash.error.old_form');
  const key = keyOf(session, nonce);
  const c = await claim(s, session, key, action);
  if (c.kind === 'replay') return { kind: 'repeat', summary: (c.body ?? {}) as Summary };
  const stopRenewing = s.idempotency.keepAlive(c, (err) => s.log.warn({ err }, 'idempotency lease renewal failed'));
  let result: R;
  try {
    result = await run(c.resourceId as UUID); // the store makes it with randomUUID()
  } catch (err) {
    // Nothing is stored, so the same form may be sent again; it finds whatever this attempt did.
    await s.idempotency.abandon(c, false);
    throw err;
  } finally {
    stopRenewing();
  }
  const summary = summarise(result);
  await s.idempotency.complete(c, 200, summary);
  noteFormRan(session, summary); // the change ran: its audit entry names what it made (audit.ts)
  return { kind: 'first', result };
}
