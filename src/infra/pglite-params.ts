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
