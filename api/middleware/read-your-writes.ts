// Read-your-writes in an idempotent request (idempotency.ts): the answer is sent only once the read
// models include what it is about, and that wait runs beside the key's completion rather than before
// it (two commits in a row were a sixth of a create's time; bench issue 8, bench/PROFILE.md §16).
// Every idempotent handler renders its answer from the state it decided, never from a read model.
import { DomainError } from '../../domain/errors.ts';
import type { ApiServices } from '../services.ts';
import type { Ctx } from '../module.ts';

/** Waits until the read models include everything committed so far. */
export async function awaitEverythingCommitted(services: ApiServices): Promise<void> {
  await services.awaitReadModels(await services.store.head());
}

/**
 * For answers that say they are final (a settled statement, a balance as of a time): the read
 * models must include every commit before the request, or the answer is 503, never one read from a
 * lagging table (CONTRACT §17).
 */
export async function requireEverythingCommitted(services: ApiServices): Promise<void> {
  if (!(await services.projector.waitFor(await services.store.head()))) {
    throw new DomainError('service_unavailable', 'The read models are catching up with the latest payments; retry in a moment');
  }
}

interface DeferredReadModelWait {
  /** Raises the position the answer waits for. */
  note(position: bigint | undefined): Promise<void>;
  /** Waits until the read models include the highest position noted. */
  wait(): Promise<void>;
}

/** Gives the handler services whose read-model waits only note the position, to be waited for once. */
export function deferReadModelWaits(ctx: Ctx): DeferredReadModelWait {
  const services = ctx.services;
  let readModelsAt: bigint | undefined;
  const note = async (position: bigint | undefined) => {
    if (position !== undefined && (readModelsAt === undefined || position > readModelsAt)) readModelsAt = position;
  };
  ctx.services = Object.create(services, { awaitReadModels: { value: note } }) as ApiServices;
  return { note, wait: () => services.awaitReadModels(readModelsAt) };
}
