// The idempotent request (CONTRACT.md §6): claim the key, run the handler under the claim, and
// store its outcome, so that one key gives one outcome whatever the timing (issue 28):
// - the claim is renewed while the handler runs (a live request is never taken over);
// - the outcome is stored only by the claim's holder (its token), never over an attempt that took
//   the key over;
// - a 5xx stores nothing and keeps the key's resource id (relinquish): the retry takes the claim over
//   at once and answers what committed (an append whose commit was in doubt included), as a replay.
// The claims stay (issue 29 weighed Formance's key written in the events' own transaction): the
// event store may be KurrentDB, outside PostgreSQL, so there is no transaction to share, and a
// business refusal (a stored 4xx) has no event to write the key beside.
import type { RequestHandler } from 'express';
import { DomainError } from '../../domain/errors.ts';
import { requestHash, unkeyedRequestHash, validKey, type HeldClaim } from '../../commands/idempotency.ts';
import { errorBody, STATUS_OF } from '../errors.ts';
import type { Ctx, Handler, Reply } from '../module.ts';
import { awaitEverythingCommitted, deferReadModelWaits } from './read-your-writes.ts';
import type { Answer } from './respond.ts';
import type { Secrets } from '../../infra/secrets.ts';

/** Checked after the path and query, before the body: a missing or malformed key is refused first. */
export const requireIdempotencyKey: RequestHandler = (req, _res, next) => {
  const key = req.header('idempotency-key');
  if (key === undefined || key === '') {
    throw new DomainError('idempotency_key_required', 'This endpoint requires an Idempotency-Key header');
  }
  if (!validKey(key)) {
    throw new DomainError('bad_request', 'Invalid Idempotency-Key', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable characters' }]);
  }
  next();
};

interface IdempotentRequest {
  ctx: Ctx;
  handler: Handler;
  key: string;
  method: string;
  path: string;
}

/** The handler run once per Idempotency-Key (checked by requireIdempotencyKey). */
export const idempotently = (handler: Handler): Answer => (ctx, req) =>
  runIdempotent({ ctx, handler, key: req.header('idempotency-key')!, method: req.method, path: req.path });

const withMeta = (body: unknown, key: string, replayed: boolean) =>
  ({ ...(body && typeof body === 'object' ? (body as object) : {}), _meta: { idempotency_key: key, idempotency_replayed: replayed } });

/**
 * A stored refusal is replayed even after its cause is fixed (a topped-up wallet): its message says
 * so, with what to do. The code stays; the first answer and every replay carry the same message.
 */
const NEW_KEY_HINT =
  'This refusal is stored for this Idempotency-Key and replayed to every retry with it: once the cause is fixed, send the request with a new Idempotency-Key.';

const withNewKeyHint = (message: string) => (message.endsWith(NEW_KEY_HINT) ? message : `${message}. ${NEW_KEY_HINT}`.replace(/\.\. /, '. '));

/**
 * The stored body as replayed: a refusal carries the first request's id (the X-Request-Id header is
 * the replay's own, as on every response). Refusals stored before the id and the hint were kept in
 * them (issue 31) get the hint, and the replay's id for the one they lost.
 */
function replayedBody(body: unknown, requestId: string): unknown {
  const error = (body as { error?: { message?: unknown; request_id?: unknown } } | null)?.error;
  if (!error || typeof error.message !== 'string') return body;
  return { ...(body as object), error: { ...error, message: withNewKeyHint(error.message), request_id: error.request_id ?? requestId } };
}

/** A stored body with its sealed fields (`_sealed`, module.ts Reply.stored) answered in clear again. */
function unsealed(body: unknown, secrets: Secrets): unknown {
  const sealed = (body as { _sealed?: Record<string, string> } | null)?._sealed;
  if (!sealed) return body;
  const { _sealed: _, ...rest } = body as Record<string, unknown>;
  return { ...rest, ...Object.fromEntries(Object.entries(sealed).map(([field, value]) => [field, secrets.decrypt(value)])) };
}

/** Runs the request once per key; answers the reply to send. */
async function runIdempotent(r: IdempotentRequest): Promise<Reply> {
  const { ctx, key } = r;
  const services = ctx.services;
  const hash = requestHash(services.secrets, r.method, r.path, ctx.body);
  const claim = await services.idempotency.claim(ctx.merchantId, key, r.method, r.path, hash, () => unkeyedRequestHash(r.method, r.path, ctx.body));
  if (claim.kind === 'replay') {
    // The key's completion may have committed before the read models took in its write (they
    // are committed side by side, below; a crash can fall between): a replay, like the first
    // answer, is sent only once they include everything committed so far.
    await awaitEverythingCommitted(services);
    return { status: claim.status, body: withMeta(replayedBody(unsealed(claim.body, services.secrets), ctx.requestId), key, true) };
  }
  const stopRenewing = services.idempotency.keepAlive(claim, (err) => ctx.log.warn({ err }, 'idempotency lease renewal failed'));
  try {
    return await runClaimed(r, claim);
  } finally {
    stopRenewing();
  }
}

async function runClaimed(r: IdempotentRequest, claim: HeldClaim): Promise<Reply> {
  const { ctx, key } = r;
  const services = ctx.services;
  ctx.idempotency = { key, resourceId: claim.resourceId, fresh: claim.fresh };
  // Read-your-writes and the key's completion, side by side (read-your-writes.ts): the handler's
  // waits for the read models only note the position here, and the answer goes once both have committed.
  const readModels = deferReadModelWaits(ctx);
  // A take-over answers about what an earlier attempt may have written: wait as a replay does.
  if (!claim.fresh) await readModels.note(await services.store.head());
  /** Stores the outcome; false when the claim was taken over meanwhile (then the key's answer is not ours to give). */
  const outcome = async (status: number, stored: unknown): Promise<boolean> => {
    const [, held] = await Promise.all([readModels.wait(), services.idempotency.complete(claim, status, stored)]);
    if (!held) ctx.log.warn({ resource_id: claim.resourceId }, 'idempotency claim taken over before its outcome was stored');
    return held;
  };
  let reply: Reply;
  try {
    reply = await r.handler(ctx);
  } catch (err) {
    // A body the handler finds invalid (bad_request: a phone, a date) was refused before it ran,
    // like a schema error: nothing is stored, so the corrected body can use the same key.
    if (err instanceof DomainError && err.code !== 'bad_request' && STATUS_OF[err.code] < 500) {
      // A business refusal is an outcome: stored and replayed like a success, the same body
      // (CONTRACT.md §6): the first request's id included, and the hint that only a new key runs again.
      const refusal = errorBody(err.code, withNewKeyHint(err.message), err.details, ctx.requestId);
      if (!(await outcome(STATUS_OF[err.code], refusal))) return answerOfTaker(r);
      return { status: STATUS_OF[err.code], body: withMeta(refusal, key, false) };
    }
    // Nothing stored; the resource id stays with the key unless nothing can have been written.
    await services.idempotency.abandon(claim, err instanceof DomainError && err.code === 'bad_request').catch(() => undefined);
    throw err;
  }
  if (reply.status >= 500 || !('body' in reply)) {
    await services.idempotency.abandon(claim, false);
    return reply;
  }
  if (!(await outcome(reply.status, reply.stored !== undefined ? reply.stored : reply.body))) return answerOfTaker(r);
  return { ...reply, body: withMeta(reply.body, key, reply.replayed === true) };
}

/**
 * This attempt was taken over while it ran (its lease lapsed), so the key's answer is the taker's:
 * what the key stores now, or 409 while the taker still runs. Answering our own outcome could show
 * one key two answers (CONTRACT §17); both attempts worked on the same resource id, so nothing of
 * ours is lost: the stored answer or a retry names what we committed.
 */
async function answerOfTaker(r: IdempotentRequest): Promise<Reply> {
  const { ctx, key } = r;
  const now = await ctx.services.idempotency.current(ctx.merchantId, key);
  if (now?.kind !== 'replay') throw new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed');
  return { status: now.status, body: withMeta(replayedBody(unsealed(now.body, ctx.services.secrets), ctx.requestId), key, true) };
}
