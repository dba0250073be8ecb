// PGlite runs each statement synchronously on the service's one thread, and its query queue hands
// the connection from one statement to the next in promise callbacks: while statements are queued,
// Node never gets back to its event loop, so no new request is read and no response is written
// until the queue runs dry. Under load, the first requests of a burst waited 2 to 2.5 s that way
// (bench issue 8, bench/PROFILE.md §12). Here a run of statements gives the event loop a turn once
// it has held it for YIELD_AFTER_MS: a statement then waits for the loop's next turn to start.
import type { PGlite } from '@electric-sql/pglite';

/**
 * How long a run of statements may keep the event loop before the next one waits for a turn. In
 * the bench (embedded payin-create), 5 ms: p99 ~410 ms instead of ~1 s and 9% more creates/s;
 * yielding before every statement (0) cut the p99 further but the throughput by 6%.
 */
export const YIELD_AFTER_MS = 5;

/** Makes `pglite.query` take turns with the event loop (in place; returns the same instance). */
export function takeTurns(pglite: PGlite, yieldAfterMs = YIELD_AFTER_MS): PGlite {
  const query = pglite.query.bind(pglite);
  // A turn marker: an immediate scheduled when the run started. Until it fires, the loop has not
  // had a turn since `since`.
  let pending = false;
  let since = 0;
  let turn: Promise<void> = Promise.resolve();
  const taking = (async (...args: Parameters<typeof query>) => {
    if (!pending) {
      pending = true;
      since = performance.now();
      turn = new Promise((resolve) => setImmediate(() => {
        pending = false;
        resolve();
      }));
    }
    if (performance.now() - since > yieldAfterMs) await turn;
    return query(...args);
  }) as typeof query;
  (pglite as { query: typeof query }).query = taking;
  return pglite;
}
