// PGlite's start parameters: its own defaults, with PostgreSQL's shared buffers sized for a process
// that also runs the service. PostgreSQL's 128 MB default lives inside the WebAssembly memory, which
// never shrinks; the files under it stay in the operating system's page cache either way.

/** Default for PGLITE_SHARED_BUFFERS_MB. */
export const DEFAULT_PGLITE_SHARED_BUFFERS_MB = 16;

/** PGlite's WebAssembly memory ends at 2 GB; the buffers must leave room for everything else in it. */
export const MAX_PGLITE_SHARED_BUFFERS_MB = 1024;

export function pgliteStartParams(defaults: readonly string[], sharedBuffersMb: number): string[] {
  if (!Number.isInteger(sharedBuffersMb) || sharedBuffersMb < 1 || sharedBuffersMb > MAX_PGLITE_SHARED_BUFFERS_MB) {
    throw new RangeError(`shared buffers must be a whole number of MB from 1 to ${MAX_PGLITE_SHARED_BUFFERS_MB} (got ${sharedBuffersMb})`);
  }
  return [...defaults, '-c', `shared_buffers=${sharedBuffersMb}MB`];
}

/**
 * Run once on PGlite's session: ANALYZE samples 300 rows per unit of the statistics target, and the
 * sample (whole event rows with their JSON) lives in the WebAssembly memory, which keeps its high
 * mark for good. At PostgreSQL's default of 100, analysing the events grew the service by about
 * 30 MB per table and took 300 ms of the one session; at 10 (PostgreSQL's default before 8.4),
 * 3 MB and 44 ms. The service's queries are key and range lookups, which need no finer histograms.
 */
export const PGLITE_STATISTICS_TARGET = 'SET default_statistics_target = 10';
