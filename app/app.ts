// The composition root: builds the services from the configuration and starts what the role runs.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../infra/config.ts';
import { systemClock, type Clock } from '../infra/clock.ts';
import { createLogger } from '../infra/log.ts';
import { openConfiguredDatabase, migrate, type Database } from '../infra/db.ts';
import { lockDataDir } from '../infra/data-dir-lock.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import type { EventStore } from '../infra/eventstore/types.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { NatsBus } from '../infra/bus/nats.ts';
import type { Bus } from '../infra/bus/types.ts';
import { Secrets } from '../infra/secrets.ts';
import { systemResolver, type Resolver } from '../infra/url-safety.ts';
import { Aggregates } from '../commands/aggregates.ts';
import { IdempotencyStore } from '../commands/idempotency.ts';
import { Projector } from '../projections/projector.ts';
import { Scheduler } from '../infra/scheduler.ts';
import { Metrics } from '../infra/metrics.ts';
import { MerchantRowCache } from '../projections/merchant-row-cache.ts';
import { SeenVersions, type SeenVersionsReader } from '../infra/eventstore/seen-versions.ts';
import { isMerchantStream } from '../commands/streams.ts';
import { stateSources } from './metrics-sources.ts';
import { createHttpApp } from '../api/server.ts';
import { createHttpServer } from '../api/http-server.ts';
import { systemModule } from '../api/routes/system.ts';
import { apiModules, projections, workers } from './registry.ts';
import { mountDashboard } from '../dashboard/router.ts';
import type { ApiServices } from '../api/services.ts';

export interface AppOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
  resolver?: Resolver;
  /** Use this database instead of opening one (tests). */
  database?: Database;
  bus?: Bus;
  /** Listen on this port (0 = any free port); defaults to config.port. */
  port?: number;
}

export interface RunningApp {
  services: ApiServices;
  url: string | undefined;
  server: http.Server | undefined;
  stop(): Promise<void>;
}

/** A value kept in $DATA_DIR the first time it is needed (generated), unless given. */
function persistent(dataDir: string, file: string, given: string | undefined, make: () => string): { value: string; generated: boolean } {
  if (given) return { value: given, generated: false };
  const p = path.join(dataDir, file);
  if (fs.existsSync(p)) return { value: fs.readFileSync(p, 'utf8').trim(), generated: false };
  fs.mkdirSync(dataDir, { recursive: true });
  const value = make();
  fs.writeFileSync(p, `${value}\n`, { mode: 0o600 });
  return { value, generated: true };
}

export async function startApp(opts: AppOptions): Promise<RunningApp> {
  const config = opts.config;
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  // One service per data directory in the embedded mode (its in-process bus is its own).
  const unlock = config.databaseUrl || opts.database ? () => undefined : lockDataDir(config.dataDir);
  let db: Database;
  try {
    db = opts.database ?? (await openConfiguredDatabase(config, { log: (msg) => log.info(msg), stopServer: 'always' }));
  } catch (err) {
    unlock();
    throw err;
  }
  await migrate(db);

  const admin = persistent(config.dataDir, 'admin-token', config.adminToken, () => randomBytes(24).toString('base64url'));
  if (admin.generated) {
    // Printed once, on the run that generated it; kept in $DATA_DIR/admin-token.
    log.info(`operator token generated: ${admin.value} (kept in ${path.join(config.dataDir, 'admin-token')})`);
  }
  const serverKey = persistent(config.dataDir, 'server-key', config.secretHashKey, () => randomBytes(32).toString('base64url'));

  // The event store: KurrentDB when EVENTSTORE_URL is set (read models stay in PostgreSQL),
  // else the events table next to the read models.
  let store: EventStore;
  if (config.eventstoreUrl) {
    // Loaded only here: its gRPC client is tens of MB of resident memory a PostgreSQL store never uses.
    const { KurrentEventStore } = await import('../infra/eventstore/kurrent.ts');
    store = new KurrentEventStore(config.eventstoreUrl, clock, { log });
  } else {
    const pgStore = new PostgresEventStore(db, clock);
    await pgStore.start();
    store = pgStore;
  }
  // The bus: NATS JetStream when NATS_URL is set (names prefixed by NATS_PREFIX), else in-process.
  const bus: Bus = opts.bus ?? (config.natsUrl
    ? await NatsBus.connect({ url: config.natsUrl, prefix: config.natsPrefix, ackWaitMs: config.busAckWaitMs, log })
    : new MemoryBus());
  const aggregates = new Aggregates(store);
  const projector = new Projector(db.knex, store, projections, log);

  const services: ApiServices = {
    config, clock, log, db, knex: db.knex, store, bus, aggregates, projector,
    secrets: new Secrets(serverKey.value),
    adminToken: admin.value,
    resolver: opts.resolver ?? systemResolver,
    idempotency: new IdempotencyStore(db.knex, clock, config.idempotencyLeaseMs),
    metrics: new Metrics(),
    merchantVersions: new SeenVersions(isMerchantStream),
    keyCache: new MerchantRowCache(),
    scheduler: new Scheduler(db.knex, clock, log, { leaseMs: config.jobLeaseMs }),
    awaitReadModels: async (position) => {
      if (position === undefined) return;
      // The write is committed whatever happens here; a projector that cannot catch up in time is
      // an operational fault (a failing batch, a database stall) that must be seen, not hidden.
      if (!(await projector.waitFor(position))) {
        log.error({ position: position.toString() }, 'read models did not reach a committed write in time (read-your-writes not met)');
      }
    },
  };

  services.metrics.watch(stateSources(services));
  // Keys are created, rotated and revoked and merchants suspended on merchant streams.
  // The projector reads the global order: what it applies counts for the merchant versions seen.
  let projectorSeen: SeenVersionsReader | undefined;
  projector.onStarted((after) => { projectorSeen = services.merchantVersions.reader(after); });
  projector.onApplied((events) => projectorSeen?.observe(events));
  projector.onApplied((events) => {
    if (!events.some((e) => isMerchantStream(e.streamId))) return;
    services.keyCache.clear();
  });
  await projector.start();
  // Before any worker or request caches a state: every event up to the head is in what they read.
  services.merchantVersions.setBaseline(await store.head());
  const stops: Array<() => Promise<void>> = [];
  if (config.role !== 'api') {
    for (const w of workers) stops.push(await w.start(services));
    services.scheduler.start();
    stops.push(() => services.scheduler.stop());
  }

  let server: http.Server | undefined;
  let url: string | undefined;
  {
    // A worker serves only the system routes (liveness, readiness) so that an orchestrator can
    // health-check it like an API process; the merchant and operator APIs are the api role's.
    let document: unknown;
    const modules = config.role === 'worker' ? [] : apiModules;
    // The merchant dashboard (server-rendered pages at /dashboard) is the api role's too.
    const extras = config.role === 'worker' ? [] : [mountDashboard(services)];
    const { app, document: doc } = createHttpApp(services, [systemModule(() => document), ...modules], extras);
    document = doc;
    server = createHttpServer(app, { headersTimeoutMs: config.httpHeadersTimeoutMs, requestTimeoutMs: config.httpRequestTimeoutMs });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(opts.port ?? config.port, config.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    url = `http://${config.host}:${address.port}`;
    log.info({ url, role: config.role, store: store.name, bus: bus.name },
      config.role === 'worker' ? 'worker running (health at /healthz, /readyz)' : 'merchant payments API listening');
  }

  let stopped = false;
  return {
    services,
    url,
    server,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      // Stop taking requests, let in-flight ones finish, then stop workers and readers.
      if (server) {
        const closing = new Promise<void>((r) => server!.close(() => r()));
        server.closeIdleConnections();
        await closing;
      }
      for (const s of stops.reverse()) await s();
      await projector.stop();
      await bus.close();
      await store.close();
      if (!opts.database) await db.close();
      unlock();
    },
  };
}
