// Waiting in tests: on the thing itself (a delivery received, a row written, a status reached, the
// scheduler's `polled()`, a manual clock moved), never on how long it usually takes. The bound is
// only a safety net, generous enough that a loaded machine never reaches it (three test files and
// two busy processes on two cores: docs/TESTING.md): it turns a hang into a failure that names what
// never came, and what the probe saw last.

/** The safety net of every wait (ms); TEST_WAIT_BOUND_MS changes it (e.g. shorter, to find a wait that hangs). */
export const WAIT_BOUND_MS = Number(process.env.TEST_WAIT_BOUND_MS) || 60_000;

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const shown = (v: unknown): string => {
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 300);
  } catch {
    return String(v);
  }
};

/**
 * Polls `probe` (every 20 ms) until it answers something truthy, and answers that. After `boundMs`
 * it fails: "timed out after 60 s waiting for <what> (last: …)".
 */
export async function waitUntil<T>(what: string, probe: () => T | Promise<T>, boundMs = WAIT_BOUND_MS): Promise<Truthy<T>> {
  const end = Date.now() + boundMs;
  for (;;) {
    const v = await probe();
    if (v) return v as Truthy<T>;
    if (Date.now() > end) throw new Error(`timed out after ${Math.round(boundMs / 1000)} s waiting for ${what} (last: ${shown(v)})`);
    await pause(20);
  }
}

/**
 * Resolves with `p`, or fails naming `what` after `boundMs` (a promise that should settle by itself);
 * `explain`, when given, adds what it answers then (e.g. what the database's sessions wait on).
 */
export async function settles<T>(what: string, p: Promise<T>, boundMs = WAIT_BOUND_MS, explain?: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const message = `timed out after ${Math.round(boundMs / 1000)} s waiting for ${what}`;
      if (!explain) return reject(new Error(message));
      explain().then((e) => reject(new Error(`${message}; ${e}`)), (err: unknown) => reject(new Error(`${message} (${String(err)})`)));
    }, boundMs);
  });
  try {
    return await Promise.race([p, bound]);
  } finally {
    clearTimeout(timer);
  }
}
