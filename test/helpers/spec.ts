// Given/when/then specifications for pure deciders (Emmett style):
//   spec(decider).given([...events]).when((state) => decide(state, cmd)).then([...events])
import type { Test } from 'tap';
import { DomainError } from '../../domain/errors.ts';
import type { Decider, DomainEvent } from '../../domain/decider.ts';
import { fold } from '../../domain/decider.ts';

export function spec<S, E extends DomainEvent>(decider: Decider<S, E>) {
  return {
    given(events: E[]) {
      const state = fold(decider, events);
      return {
        state,
        when(decide: (state: S) => E[]) {
          return {
            then(t: Test, expected: E[], message?: string) {
              t.same(decide(state), expected, message ?? 'decides the expected events');
            },
            thenMatch(t: Test, expected: unknown, message?: string) {
              t.match(decide(state), expected, message ?? 'decides matching events');
            },
            thenRefuses(t: Test, code: string, message?: string) {
              try {
                decide(state);
                t.fail(`expected refusal ${code}`);
              } catch (err) {
                t.ok(err instanceof DomainError, 'a DomainError');
                t.equal((err as DomainError).code, code, message ?? `refused with ${code}`);
              }
            },
          };
        },
      };
    },
  };
}
