// What command handlers, workers and the dashboard are given: the composition root (app/app.ts)
// builds one (an ApiServices, api/services.ts, which adds what only the HTTP API reads).
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../infra/config.ts';
import type { Clock } from '../infra/clock.ts';
import type { Database } from '../infra/db.ts';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { Bus } from '../infra/bus/types.ts';
import type { Secrets } from '../infra/secrets.ts';
import type { Resolver } from '../infra/url-safety.ts';
import type { Aggregates } from './aggregates.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { SeenVersions } from '../infra/eventstore/seen-versions.ts';
import type { Scheduler } from '../infra/scheduler.ts';
import type { Metrics } from '../infra/metrics.ts';

export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  db: Database;
  knex: Knex;
  store: EventStore;
  bus: Bus;
  aggregates: Aggregates;
  secrets: Secrets;
  /** DNS resolution for outbound URL checks (tests stub it). */
  resolver: Resolver;
  idempotency: IdempotencyStore;
  /** Durable timers (provider re-checks, webhook retries). Workers register kinds at start. */
  scheduler: Scheduler;
  /** Prometheus instruments (GET /metrics). */
  metrics: Metrics;
  /** The newest version of each merchant stream this process has read in the global order (the webhook recorder's target). */
  merchantVersions: SeenVersions;
  /**
   * Read-your-writes: waits until every read model includes the given position. In an idempotent
   * request the server passes an `awaitReadModels` that only notes the position, and waits for it beside the
   * key's completion before answering (api/middleware/read-your-writes.ts): such a handler renders its answer from the
   * state it decided and must not read a read model after its own write.
   */
  awaitReadModels(position: bigint | undefined): Promise<void>;
}
