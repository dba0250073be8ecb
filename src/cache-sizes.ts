// How many entries the service's three largest in-memory caches hold, by where it runs. Each cache
// is an optimisation (a miss reads the table), so its size trades memory for reads:
// - aggregates: stream states the command handlers decide on (commands/aggregates.ts);
// - projectorRows: rows each projection last wrote (projections/row-cache.ts);
// - recentEvents: the events this process last committed (infra/eventstore/recent-appends.ts).
// They fill within seconds under load and then hold their size.
import { ROW_CACHE_LIMIT } from './projections/row-cache.ts';
import { RECENT_APPENDS_LIMIT } from './infra/eventstore/recent-appends.ts';
import { AGGREGATE_CACHE_LIMIT } from './commands/aggregates.ts';
import type { DbKind } from './infra/db.ts';

export interface CacheSizes {
  aggregates: number;
  projectorRows: number;
  recentEvents: number;
}

/** On PostgreSQL: sized for its throughput (each constant's comment says why). */
export const SERVER_CACHE_SIZES: CacheSizes = {
  aggregates: AGGREGATE_CACHE_LIMIT,
  projectorRows: ROW_CACHE_LIMIT,
  recentEvents: RECENT_APPENDS_LIMIT,
};

/**
 * Embedded (PGlite, one process for a laptop or the sandbox): it creates about 700 quote + payin
 * pairs a second at most, and the sandbox settles a payin 2 s after it, so 4,000 states and rows
 * still span a payin's life. Under the bench's payin load these three at the server's sizes held
 * about 40 MB more (peak RSS 318 to 321 MB against 278 to 283; bench/PROFILE.md §19), at the same
 * throughput.
 */
export const EMBEDDED_CACHE_SIZES: CacheSizes = {
  aggregates: 3_000,
  projectorRows: 3_000,
  recentEvents: 4_096,
};

export function cacheSizesFor(kind: DbKind): CacheSizes {
  return kind === 'pglite' ? EMBEDDED_CACHE_SIZES : SERVER_CACHE_SIZES;
}
