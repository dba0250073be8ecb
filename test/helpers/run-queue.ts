// How long this process's event loop was kept from running by the rest of the machine: the time its
// main thread spent runnable but waiting for a CPU (Linux's /proc/thread-self/schedstat, second
// field, in ns). A test that must measure the service's own wall-clock bound (a time-out, a latency)
// takes that out of what it measured, so two busy processes beside it change nothing (issue 45),
// while time the process spent working, or idle, still counts. Read from the main thread only.
import fs from 'node:fs';

/** Milliseconds the main thread has waited on the run queue so far; 0 where the kernel does not say (nothing is taken out). */
export function runQueueWaitMs(): number {
  try {
    const waited = Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]);
    return Number.isFinite(waited) ? waited / 1e6 : 0;
  } catch {
    return 0;
  }
}

/** A stopwatch of wall time less the run-queue wait since it started. */
export function ownTime(): () => { wallMs: number; waitedMs: number; ownMs: number } {
  const wall = performance.now();
  const waited = runQueueWaitMs();
  return () => {
    const wallMs = performance.now() - wall;
    const waitedMs = runQueueWaitMs() - waited;
    return { wallMs, waitedMs, ownMs: wallMs - waitedMs };
  };
}

/**
 * The run-queue wait sampled every `everyMs`, to ask later what it was at a past instant (the last
 * sample at or before it: a sample taken late was late because the thread waited, so the answer
 * errs towards taking out more of the wait after that instant, never less of what came before).
 */
export function runQueueHistory(everyMs = 20): { waitedAt(atMs: number): number; stop(): void } {
  const samples: Array<[number, number]> = [[performance.now(), runQueueWaitMs()]];
  const timer = setInterval(() => samples.push([performance.now(), runQueueWaitMs()]), everyMs);
  return {
    waitedAt(atMs) {
      let waited = samples[0]![1];
      for (const [at, w] of samples) {
        if (at > atMs) break;
        waited = w;
      }
      return waited;
    },
    stop: () => clearInterval(timer),
  };
}
