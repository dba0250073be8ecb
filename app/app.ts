// The composition root: builds the services from the configuration and starts what the role runs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../infra/config.ts';
import { systemClock, type Clock } from '../infra/clock.ts';
import { createLogger } from '../infra/log.ts';
import { openConfiguredDatabase, migrate, type Database } from '../infra/db.ts';
import { lockDataDir } from '../infra/data-dir-lock.ts';
import type { Bus } from '../infra/bus/types.ts';
import type { Resolver } from '../infra/url-safety.ts';
import type { SeenVersionsReader } from '../infra/eventstore/seen-versions.ts';
import { isMerchantStream } from '../commands/streams.ts';
import { stateSources } from './metrics-sources.ts';
import { buildServices } from './services.ts';
import { createHttpApp } from '../api/server.ts';
import { createHttpServer } from '../api/http-server.ts';
import { systemModule } from '../api/routes/system.ts';
import { apiModules, workerModules, workers } from './registry.ts';
import { mountDashboard } from '../dashboard/router.ts';
import { mountPayerPage } from '../pay/router.ts';
import type { ApiServices } from '../api/services.ts';
import { closeEventStreams } from '../api/event-stream/streams.ts';

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

/** Opens the configured database (or takes the given one); `unlock` frees the data directory. */
async function openDatabase(opts: AppOptions, log: Logger): Promise<{ db: Database; unlock: () => void }> {
  const config = opts.config;
  // One service per data directory in the embedded mode (its in-process bus is its own).
  const unlock = config.databaseUrl || opts.database ? () => undefined : lockDataDir(config.dataDir);
  try {
    const db = opts.database ?? (await openConfiguredDatabase(config, { log: (msg) => log.info(msg), stopServer: 'always' }));
    return { db, unlock };
  } catch (err) {
    unlock();
    throw err;
  }
}

/** Starts the projector, with what its applied events tell the caches; then the merchant versions' baseline. */
async function startReadModels(services: ApiServices): Promise<void> {
  const { projector } = services;
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
  services.merchantVersions.setBaseline(await services.store.head());
}

/** The workers and the scheduler, unless the role is api; returns their stop functions in start order. */
async function startWorkers(services: ApiServices): Promise<Array<() => Promise<void>>> {
  const stops: Array<() => Promise<void>> = [];
  if (services.config.role !== 'api') {
    for (const w of workers) stops.push(await w.start(services));
    services.scheduler.start();
    stops.push(() => services.scheduler.stop());
  }
  return stops;
}

async function listen(services: ApiServices, port: number | undefined): Promise<{ server: http.Server; url: string }> {
  const { config, log } = services;
  // A worker serves the system routes (liveness, readiness) so that an orchestrator can health-check
  // it like an API process, and its own metrics; the merchant and operator APIs are the api role's.
  let document: unknown;
  const modules = config.role === 'worker' ? workerModules : apiModules;
  // The merchant dashboard (server-rendered pages at /dashboard) and the payer's page (public, at /pay) are the api role's too.
  const extras = config.role === 'worker' ? [] : [mountDashboard(services), mountPayerPage(services)];
  const { app, document: doc } = createHttpApp(services, [systemModule(() => document), ...modules], extras);
  document = doc;
  const server = createHttpServer(app, { headersTimeoutMs: config.httpHeadersTimeoutMs, requestTimeoutMs: config.httpRequestTimeoutMs });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${config.host}:${address.port}`;
  log.info({ url, role: config.role, store: services.store.name, bus: services.bus.name },
    config.role === 'worker' ? 'worker running (health at /healthz, /readyz; /metrics)' : 'merchant payments API listening');
  return { server, url };
}

export async function startApp(opts: AppOptions): Promise<RunningApp> {
  const config = opts.config;
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const { db, unlock } = await openDatabase(opts, log);
  await migrate(db);
  const services = await buildServices(config, db, { clock, log, resolver: opts.resolver, bus: opts.bus });
  services.metrics.watch(stateSources(services));
  await startReadModels(services);
  const stops = await startWorkers(services);
  const { server, url } = await listen(services, opts.port);

  let stopped = false;
  return {
    services,
    url,
    server,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      // Stop taking requests, let in-flight ones finish, then stop workers and readers.
      const closing = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      // Open event streams never finish on their own: end them (clients resume with Last-Event-ID).
      await closeEventStreams(services);
      await closing;
      for (const s of stops.reverse()) await s();
      await services.projector.stop();
      await services.bus.close();
      await services.store.close();
      if (!opts.database) await db.close();
      unlock();
    },
  };
}
