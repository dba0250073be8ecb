// Where /metrics reads the service's state from at each scrape (see infra/metrics.ts).
import type { ApiServices } from '../api/services.ts';
import type { StateSources } from '../infra/metrics.ts';
import { countEvents, projectionStatus } from '../projections/rebuild.ts';
import { FORWARDER } from '../workers/event-forwarder.ts';

export function stateSources(s: ApiServices): StateSources {
  return {
    projections: () => projectionStatus(s.knex, s.store, s.projector.projections),
    forwarderLag: async () => {
      const head = await s.store.head();
      const r = await s.knex.raw<{ rows: Array<{ position: string }> }>('SELECT position FROM checkpoints WHERE name = ?', [FORWARDER]);
      return countEvents(s.knex, s.store, BigInt(r.rows[0]?.position ?? 0), head);
    },
    busLag: async () => (await s.bus.consumerLag?.()) ?? [],
    jobs: async () => {
      const r = await s.knex.raw<{ rows: Array<{ kind: string; waiting: string | number; due: string | number }> }>(
        'SELECT kind, count(*) AS waiting, count(*) FILTER (WHERE due_at <= ?) AS due FROM jobs GROUP BY kind ORDER BY kind',
        [s.clock.now()],
      );
      return r.rows.map((row) => ({ kind: row.kind, waiting: Number(row.waiting), due: Number(row.due) }));
    },
  };
}
