// What a create command run under an idempotency claim answers, and the check every create makes
// before deciding: did an earlier attempt under the same claim already create it?
import type { Decider, DomainEvent } from '../domain/decider.ts';
import type { Aggregates } from './aggregates.ts';

export interface Created<S> {
  state: S;
  /**
   * An earlier attempt under the same claim had already created it (a retry that took over the
   * claim after a crash or an in-doubt commit): the API answers it as a replay.
   */
  existed: boolean;
}

export const created = <S>(state: S): Created<S> => ({ state, existed: false });
export const existing = <S>(state: S): Created<S> => ({ state, existed: true });

/**
 * The resource an earlier attempt under this claim created, if any (a retry that took over the
 * claim). A fresh claim's id was drawn by this request: the stream cannot exist, so it is not read.
 */
export async function createdEarlier<S extends { exists: boolean }, E extends DomainEvent>(
  aggregates: Aggregates,
  streamId: string,
  decider: Decider<S, E>,
  fresh: boolean | undefined,
): Promise<Created<S> | undefined> {
  if (fresh) {
    aggregates.assumeNew(streamId, decider);
    return undefined;
  }
  const found = await aggregates.load(streamId, decider);
  return found.state.exists ? existing(found.state) : undefined;
}
