// What the composition root (app.ts) builds once the database is open: the secrets kept in
// $DATA_DIR, the event store, the bus, and the services object every layer is handed.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../infra/config.ts';
import type { Clock } from '../infra/clock.ts';
import type { Database } from '../infra/db.ts';
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
import { SeenVersions } from '../infra/eventstore/seen-versions.ts';
import { isWebhookTargetStream } from '../commands/streams.ts';
import { projections } from './registry.ts';
import type { ApiServices } from '../api/services.ts';

/** What the services are built with besides the configuration and the database. */
interface ServiceParts {
  clock: Clock;
  log: Logger;
  resolver?: Resolver;
  /** Use this bus instead of the configured one (tests). */
  bus?: Bus;
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

/** The operator token and the server key: given, else kept in $DATA_DIR (generated on first start). */
function persistentSecrets(config: Config, log: Logger): { adminToken: string; serverKey: string } {
  const admin = persistent(config.dataDir, 'admin-token', config.adminToken, () => randomBytes(24).toString('base64url'));
  if (admin.generated) {
    // Printed once, on the run that generated it; kept in $DATA_DIR/admin-token.
    log.info(`operator token generated: ${admin.value} (kept in ${path.join(config.dataDir, 'admin-token')})`);
  }
  const serverKey = persistent(config.dataDir, 'server-key', config.secretHashKey, () => randomBytes(32).toString('base64url'));
  return { adminToken: admin.value, serverKey: serverKey.value };
}

// The event store: KurrentDB when EVENTSTORE_URL is set (read models stay in PostgreSQL),
// else the events table next to the read models.
async function openEventStore(config: Config, db: Database, clock: Clock, log: Logger): Promise<EventStore> {
  if (config.eventstoreUrl) {
    // Loaded only here: its gRPC client is tens of MB of resident memory a PostgreSQL store never uses.
    const { KurrentEventStore } = await import('../infra/eventstore/kurrent.ts');
    return new KurrentEventStore(config.eventstoreUrl, clock, { log });
  }
  const pgStore = new PostgresEventStore(db, clock);
  await pgStore.start();
  return pgStore;
}

// The bus: NATS JetStream when NATS_URL is set (names prefixed by NATS_PREFIX), else in-process.
async function openBus(config: Config, log: Logger): Promise<Bus> {
  return config.natsUrl
    ? await NatsBus.connect({ url: config.natsUrl, prefix: config.natsPrefix, ackWaitMs: config.busAckWaitMs, log })
    : new MemoryBus();
}

export async function buildServices(config: Config, db: Database, parts: ServiceParts): Promise<ApiServices> {
  const { clock, log } = parts;
  const secrets = persistentSecrets(config, log);
  const store = await openEventStore(config, db, clock, log);
  const bus = parts.bus ?? (await openBus(config, log));
  const aggregates = new Aggregates(store, undefined, (err, streamId) =>
    log.warn({ err, streamId }, 'snapshot not read or not written: the stream is folded from its events'));
  const projector = new Projector(db.knex, store, projections, log);
  return {
    config, clock, log, db, knex: db.knex, store, bus, aggregates, projector,
    secrets: new Secrets(secrets.serverKey),
    adminToken: secrets.adminToken,
    resolver: parts.resolver ?? systemResolver,
    idempotency: new IdempotencyStore(db.knex, clock, config.idempotencyLeaseMs),
    metrics: new Metrics(),
    merchantVersions: new SeenVersions(isWebhookTargetStream),
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
}
