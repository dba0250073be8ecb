// Online rebuilds started from the operator API (`POST /admin/projections/{name}/rebuild`), run in
// the service's own process. At most one rebuild per projection at a time in a process; their
// progress (with rate and ETA) is kept for `GET /admin/projections`.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { rebuildProjection } from './rebuild.ts';

export interface RebuildRun {
  projection: string;
  state: 'running' | 'done' | 'failed';
  started_at: string;
  finished_at: string | null;
  done: number;
  total: number;
  events_per_second: number;
  eta_seconds: number | null;
  position: string | null;
  error: string | null;
}

/** Seconds left at the rate so far (null until there is a rate). */
export function etaSeconds(done: number, total: number, elapsedMs: number): number | null {
  if (done >= total) return 0;
  if (done <= 0 || elapsedMs <= 0) return null;
  return Math.ceil(((total - done) / done) * elapsedMs / 1000);
}

/** What a rebuild runs with: the service's database, event store and log (one set of runs per service). */
interface RebuildServices {
  knex: Knex;
  store: EventStore;
  log: Logger;
}

const runs = new WeakMap<RebuildServices, Map<string, RebuildRun>>();

export function rebuildRuns(s: RebuildServices): RebuildRun[] {
  return [...(runs.get(s)?.values() ?? [])];
}

/** Starts an online rebuild in the background; answers its run (the running one if there is one). */
export function startRebuild(s: RebuildServices, projection: Projection): { run: RebuildRun; started: boolean; finished: Promise<void> } {
  let mine = runs.get(s);
  if (!mine) {
    mine = new Map();
    runs.set(s, mine);
  }
  const current = mine.get(projection.name);
  if (current?.state === 'running') return { run: current, started: false, finished: Promise.resolve() };
  const started = Date.now();
  const run: RebuildRun = {
    projection: projection.name, state: 'running', started_at: new Date(started).toISOString(), finished_at: null,
    done: 0, total: 0, events_per_second: 0, eta_seconds: null, position: null, error: null,
  };
  mine.set(projection.name, run);
  const finished = rebuildProjection(s.knex, s.store, projection, (done, total) => {
    const elapsed = Date.now() - started;
    run.done = done;
    run.total = total;
    run.events_per_second = elapsed > 0 ? Math.round((done / elapsed) * 1000) : 0;
    run.eta_seconds = etaSeconds(done, total, elapsed);
  }).then((r) => {
    run.state = 'done';
    run.position = r.position.toString();
    run.eta_seconds = 0;
  }, (err: unknown) => {
    run.state = 'failed';
    run.error = (err as Error).message;
    s.log.error({ err, projection: projection.name }, 'online rebuild failed');
  }).finally(() => {
    run.finished_at = new Date().toISOString();
  });
  return { run, started: true, finished };
}
