// The idempotent request (CONTRACT.md §6): claim the key, run the handler under the claim, and
// store its outcome, so that one key gives one outcome whatever the timing (issue 28):
// - the claim is renewed while the handler runs (a live request is never taken over);
// - the outcome is stored only by the claim's holder (its token), never over an attempt that took
//   the key over;
// - a 5xx stores nothing and keeps the key's resource id (relinquish): the retry takes the claim over
//   at once and answers what committed (an append whose commit was in doubt included), as a replay.
import type { ApiServices } from './services.ts';
import { DomainError } from '../domain/errors.ts';
import { requestHash, type HeldClaim } from '../commands/idempotency.ts';
import { errorBody, STATUS_OF } from './errors.ts';
import type { Ctx, Handler, Reply } from './module.ts';

export interface IdempotentRequest {
  ctx: Ctx;
  handler: Handler;
  key: string;
  method: string;
  path: string;
}

const withMeta = (body: unknown, key: string, replayed: boolean) =>
  ({ ...(body && typeof body === 'object' ? (body as object) : {}), _meta: { idempotency_key: key, idempotency_replayed: replayed } });

/** Runs the request once per key; answers the reply to send. */
export async function runIdempotent(r: IdempotentRequest): Promise<Reply> {
  const { ctx, key } = r;
  const services = ctx.services;
  const claim = await services.idempotency.claim(ctx.merchantId, key, r.method, r.path, requestHash(r.method, r.path, ctx.body));
  if (claim.kind === 'replay') {
    // The key's completion may have committed before the read models took in its write (they
    // are committed side by side, below; a crash can fall between): a replay, like the first
    // answer, is sent only once they include everything committed so far.
    await services.awaitReadModels(await services.store.head());
    return { status: claim.status, body: withMeta(claim.body, key, true) };
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
  // Read-your-writes and the key's completion, side by side: the handler's waits for the read
  // models only note the position here, and the answer goes once both have committed (two
  // commits in a row were a sixth of a create's time; bench issue 8, bench/PROFILE.md §16). Every
  // idempotent handler renders its answer from the state it decided, never from a read model.
  let readModelsAt: bigint | undefined;
  const noteReadModelsAt = async (position: bigint | undefined) => {
    if (position !== undefined && (readModelsAt === undefined || position > readModelsAt)) readModelsAt = position;
  };
  ctx.services = Object.create(services, { awaitReadModels: { value: noteReadModelsAt } }) as ApiServices;
  // A take-over answers about what an earlier attempt may have written: wait as a replay does.
  if (!claim.fresh) readModelsAt = await services.store.head();
  const outcome = async (status: number, stored: unknown) => {
    const [, held] = await Promise.all([services.awaitReadModels(readModelsAt), services.idempotency.complete(claim, status, stored)]);
    // Taken over while this ran (its lease lapsed): the attempt that holds the key now stores the
    // outcome, answering the same resource id. Ours is still the truth about what we did.
    if (!held) ctx.log.warn({ resource_id: claim.resourceId }, 'idempotency claim taken over before its outcome was stored');
  };
  let reply: Reply;
  try {
    reply = await r.handler(ctx);
  } catch (err) {
    // A body the handler finds invalid (bad_request: a phone, a date) was refused before it ran,
    // like a schema error: nothing is stored, so the corrected body can use the same key.
    if (err instanceof DomainError && err.code !== 'bad_request' && STATUS_OF[err.code] < 500) {
      // A business refusal is an outcome: stored and replayed like a success.
      await outcome(STATUS_OF[err.code], errorBody(err.code, err.message, err.details));
      return { status: STATUS_OF[err.code], body: withMeta(errorBody(err.code, err.message, err.details, ctx.requestId), key, false) };
    }
    // Nothing stored; the resource id stays with the key unless nothing can have been written.
    await services.idempotency.abandon(claim, err instanceof DomainError && err.code === 'bad_request').catch(() => undefined);
    throw err;
  }
  if (reply.status >= 500 || 'text' in reply) {
    await services.idempotency.abandon(claim, false);
    return reply;
  }
  await outcome(reply.status, reply.body);
  return { ...reply, body: withMeta(reply.body, key, reply.replayed === true) };
}
