// Where /metrics reads the service's state from at each scrape (see infra/metrics.ts).
import type { ApiServices } from '../api/services.ts';
import type { StateSources } from '../infra/metrics.ts';
import { countEvents, projectionStatus } from '../projections/rebuild.ts';
import { FORWARDER } from '../workers/event-forwarder.ts';
import { leasedWorkersOf } from '../workers/leased.ts';
import { CHECK_JOB } from '../commands/leg-initiation.ts';

/** The providers this service has adapters for: each gets a pending-legs series, 0 included. */
function configuredProviders(s: ApiServices): string[] {
  const p = s.config.providers;
  return ['sandbox', ...(p.mtnMomo ? ['mtn_momo'] : []), ...(p.pawapay ? ['pawapay'] : [])];
}

export function stateSources(s: ApiServices): StateSources {
  return {
    projections: () => projectionStatus(s.knex, s.store, s.projector.projections),
    forwarderLag: async () => {
      const head = await s.store.head();
      const r = await s.knex.raw<{ rows: Array<{ position: string }> }>('SELECT position FROM checkpoints WHERE name = ?', [FORWARDER]);
      return countEvents(s.knex, s.store, BigInt(r.rows[0]?.position ?? 0), head);
    },
    leasedWorkers: async () => leasedWorkersOf(s),
    busLag: async () => (await s.bus.consumerLag?.()) ?? [],
    jobs: async () => {
      const r = await s.knex.raw<{ rows: Array<{ kind: string; waiting: string | number; due: string | number }> }>(
        'SELECT kind, count(*) AS waiting, count(*) FILTER (WHERE due_at <= ?) AS due FROM jobs GROUP BY kind ORDER BY kind',
        [s.clock.now()],
      );
      return r.rows.map((row) => ({ kind: row.kind, waiting: Number(row.waiting), due: Number(row.due) }));
    },
    pendingLegs: () => pendingLegs(s),
  };
}

/**
 * A leg not final yet has exactly one scheduled status check (CONTRACT §15: polled until the provider
 * answers a final status), keyed by its reference, naming its provider: one grouped read of those
 * jobs (the `jobs_due` index's kind), at most one row per provider. A leg whose initiation is under
 * way (its request not answered yet) has no check yet and is not counted.
 */
async function pendingLegs(s: ApiServices): Promise<Array<{ provider: string; pending: number; oldestSeconds: number }>> {
  const now = s.clock.now();
  const r = await s.knex.raw<{ rows: Array<{ provider: string | null; pending: string | number; oldest: Date | string | null }> }>(
    `SELECT payload->>'provider' AS provider, count(*) AS pending, min(created_at) AS oldest
       FROM jobs WHERE kind = ? GROUP BY 1 ORDER BY 1 LIMIT 100`,
    [CHECK_JOB],
  );
  const found = new Map(r.rows.filter((row) => row.provider !== null).map((row) => [row.provider!, row]));
  const names = [...new Set([...configuredProviders(s), ...found.keys()])];
  return names.map((provider) => {
    const row = found.get(provider);
    const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
    return { provider, pending: Number(row?.pending ?? 0), oldestSeconds: oldest === undefined ? 0 : Math.max(0, (now.getTime() - oldest) / 1000) };
  });
}
