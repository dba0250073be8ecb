// How far V8 lets the heap grow past what the last full collection kept. Left to itself, V8 picks
// a factor of up to 4× when the program allocates fast: under a 60-second payin load the service kept
// 65 to 90 MB live, yet its heap grew to 288 MB and its RSS to 364 MB (bench issue 8, memory
// ≤ 300 MB). A fixed factor of 1.5 kept it at 220 to 235 MB for ~15% more CPU per payment. It is a
// growth factor, not a ceiling: a larger live set still gets the heap it needs (no out-of-memory
// crash, unlike --max-old-space-size).
import v8 from 'node:v8';

/** The default on PostgreSQL: the heap grows by half of what the last full collection kept. */
export const SERVER_HEAP_GROWING_PERCENT = 50;

/**
 * The default embedded: a quarter. PGlite's memory comes on top of the heap there (150 to 190 MB),
 * and PGlite, not the collector, bounds the throughput: under the bench's payin load, peak RSS 263
 * against 274 MB in the quick profile and 287 to 296 against 298 to 314 MB over 60 seconds, at the
 * same creates/s (bench/PROFILE.md §22).
 */
export const EMBEDDED_HEAP_GROWING_PERCENT = 25;

export const defaultHeapGrowingPercent = (embedded: boolean): number =>
  (embedded ? EMBEDDED_HEAP_GROWING_PERCENT : SERVER_HEAP_GROWING_PERCENT);

/**
 * Sets V8's heap growing factor to 1 + percent/100 (0 leaves V8's own adaptive factor). V8 reads the
 * flag at each full collection, so setting it once the process runs takes effect from the next one.
 */
export function setHeapGrowingPercent(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growing percent must be a whole number ≥ 0, got ${percent}`);
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
