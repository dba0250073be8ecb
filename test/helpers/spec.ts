// Given/when/then specifications for pure deciders (Emmett style).
import type { Test } from 'tap';
import { DomainError } from '../../domain/errors.ts';
import type { CommandDecider, DomainEvent } from '../../domain/decider.ts';
import { fold } from '../../domain/decider.ts';

/**
 * Given/when/then for a decider that takes commands as values (Emmett's DeciderSpecification):
 *   deciderSpec(decider).given([...events]).when(command).then(t, [...events])
 *     | .thenNothing(t) | .thenThrows(t, 'code' or an error class)
 */
export function deciderSpec<S, E extends DomainEvent, C>(decider: CommandDecider<S, E, C>) {
  return {
    given(events: E[]) {
      const state = fold(decider, events);
      return {
        state,
        when(command: C) {
          const decide = () => decider.decide(command, state);
          return {
            /** The events decided, for a test that looks at them more closely. */
            events: decide,
            then(t: Test, expected: E[], message?: string) {
              t.same(decide(), expected, message ?? 'decides the expected events');
            },
            thenMatch(t: Test, expected: unknown, message?: string) {
              t.match(decide(), expected, message ?? 'decides matching events');
            },
            thenNothing(t: Test, message?: string) {
              t.same(decide(), [], message ?? 'decides nothing');
            },
            /**
             * Refused: a DomainError with this code, or an error of this class (an InvariantViolation).
             * Answers the error, so a test can look at its details.
             */
            thenThrows<X extends Error = DomainError>(t: Test, expected: string | (new (...args: never[]) => X), message?: string): X | undefined {
              try {
                decide();
                t.fail(`expected ${typeof expected === 'string' ? `refusal ${expected}` : expected.name}`);
                return undefined;
              } catch (err) {
                if (typeof expected === 'string') {
                  t.ok(err instanceof DomainError, 'a DomainError');
                  t.equal((err as DomainError).code, expected, message ?? `refused with ${expected}`);
                } else {
                  t.ok(err instanceof expected, message ?? `throws ${expected.name}`);
                }
                return err as X;
              }
            },
          };
        },
      };
    },
  };
}
