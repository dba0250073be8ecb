// What a create command run under an idempotency claim answers.

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
