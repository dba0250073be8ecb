// TEST ONLY: deterministic crash points for the crash-consistency suite
// (test/crash.consistency.e2e.test.ts). `CRASH_AT=<point>@<n>[,<point>@<n>…]` makes the process kill
// itself with SIGKILL the n-th time it passes `<point>`, so a test can aim at the worst moments
// (an event committed but not projected, a webhook sent but not recorded) instead of hoping a timer
// lands there. `<point>:<detail>[+<detail>…]@<n>` counts only the passes whose details name every
// `<detail>` (for after-append: event types in the committed batch; a relaunch is
// `after-append:transfer.payout.started+wallet.funds_held@1`).
// Unset (always, outside that suite) every crashPoint() call is a no-op.
//
// Points:
//   after-append             an append transaction committed; nobody has been told (no projection,
//                            no answer to the client, no idempotency outcome, nothing forwarded)
//   during-webhook-delivery  a webhook attempt got its answer; the attempt is not recorded yet
//   after-provider-call      the provider accepted a leg; the gateway has not recorded it yet
//   append-in-doubt          an append transaction committed, and its callers are told the database
//                            connection was lost (as when it drops while COMMIT's answer is on its
//                            way): the process lives on, and the request answers 503 (issue 28)
import fs from 'node:fs';

export const CRASH_POINTS = ['after-append', 'during-webhook-delivery', 'after-provider-call', 'append-in-doubt'] as const;
export type CrashPointName = (typeof CRASH_POINTS)[number];

const armed = new Map<CrashPointName, { at: number; detail: string | undefined; passes: number }>();

/** Parses `CRASH_AT`; throws on a malformed value (a typo must not silently disarm a test). */
export function parseCrashSpec(spec: string): Array<{ point: CrashPointName; detail: string | undefined; at: number }> {
  return spec.split(',').map((part) => {
    const m = /^([a-z-]+)(?::([A-Za-z0-9_.+-]+))?@([1-9][0-9]*)$/.exec(part.trim());
    if (!m || !(CRASH_POINTS as readonly string[]).includes(m[1]!)) {
      throw new Error(`CRASH_AT: "${part}" is not <point>[:<detail>]@<n> with point one of ${CRASH_POINTS.join(', ')}`);
    }
    return { point: m[1] as CrashPointName, detail: m[2], at: Number(m[3]) };
  });
}

/** Arms the points named by `spec` (main.ts only, from config.crashAt). */
export function armCrashPoints(spec: string | undefined): void {
  armed.clear();
  if (!spec) return;
  for (const { point, detail, at } of parseCrashSpec(spec)) armed.set(point, { at, detail, passes: 0 });
}

/** True when this pass is the armed one for `point` (counted). */
function reached(point: CrashPointName, details?: () => string[]): boolean {
  if (armed.size === 0) return false;
  const a = armed.get(point);
  if (!a) return false;
  if (a.detail !== undefined) {
    const named = details?.() ?? [];
    if (!a.detail.split('+').every((d) => named.includes(d))) return false;
  }
  a.passes += 1;
  if (a.passes !== a.at) return false;
  // Written synchronously: the test reads this line to tell an aimed crash from its own kills.
  fs.writeSync(2, `CRASH POINT ${point}${a.detail ? `:${a.detail}` : ''}@${a.at} reached${point === 'append-in-doubt' ? '' : ': SIGKILL'}\n`);
  return true;
}

/** Dies here (SIGKILL, no clean-up, like a power cut of the process) when this pass is the armed one. */
export function crashPoint(point: Exclude<CrashPointName, 'append-in-doubt'>, details?: () => string[]): void {
  if (!reached(point, details)) return;
  process.kill(process.pid, 'SIGKILL');
  // Nothing after the point may run while the signal lands.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
}

/**
 * The error a committed append's callers get at the armed `append-in-doubt` pass (else undefined):
 * what node-postgres gives when the connection drops before COMMIT's answer arrives.
 */
export function inDoubtPoint(details?: () => string[]): Error | undefined {
  if (!reached('append-in-doubt', details)) return undefined;
  return Object.assign(new Error('Connection terminated unexpectedly (crash point append-in-doubt)'), { code: 'ECONNRESET' });
}
