// Prometheus metrics (prom-client), one registry per running service (tests run several in one
// process). Instruments are updated where things happen (HTTP middleware, webhook attempts,
// provider calls); gauges that describe state (projection lag, bus backlog, jobs) are read from
// their sources when scraped, so a scrape always shows the present.
//
// Labels never carry a merchant, payment or customer id: bounded cardinality, and nothing about a
// merchant leaks to whoever reads the metrics. `route` is the OpenAPI path template (`/payins/{payin_id}`),
// never the concrete path.
import client from 'prom-client';
import type { Logger } from 'pino';
import { ProviderInDoubt } from './providers/http.ts';
import { LegNotTaken } from './providers/types.ts';

export interface StateSources {
  /** Each projection's checkpoint and lag in events behind the store's head. */
  projections(): Promise<Array<{ projection: string; checkpoint: bigint; head: bigint; lag: number }>>;
  /** Events stored but not yet handed to the bus by the forwarder. */
  forwarderLag(): Promise<number>;
  /** Each worker that one process at a time runs (workers/leased.ts): whether this process runs it. */
  leasedWorkers(): Promise<Array<{ worker: string; running: boolean }>>;
  /** Per durable consumer, messages not yet settled (where the bus can tell). */
  busLag(): Promise<Array<{ durable: string; pending: number }>>;
  /** Durable jobs waiting, by kind (provider re-checks, webhook attempts). */
  jobs(): Promise<Array<{ kind: string; waiting: number; due: number }>>;
  /** Per provider configured here, the legs it has that are not final yet and the age of the oldest. */
  pendingLegs(): Promise<Array<{ provider: string; pending: number; oldestSeconds: number }>>;
}

export type WebhookOutcome = 'delivered' | 'http_error' | 'network_error' | 'not_configured';

/**
 * What kind of failure a provider call ended in (CONTRACT §15): `not_taken` (LegNotTaken: nothing was
 * sent, or the provider documented a refusal; on a status query, the provider unreachable, which an
 * adapter may rethrow as a plain error with ProviderHttp's "unreachable (CODE)" message), `in_doubt`
 * (ProviderInDoubt: a time-out, a reset, a 5xx to an initiation: the provider may have the leg), `http`
 * (any other error whose message names the HTTP status the provider answered: a status query answered
 * 5xx, a token refused), `other` (the rest, e.g. an answer that could not be read).
 */
export type ProviderErrorKind = 'not_taken' | 'in_doubt' | 'http' | 'other';

export function providerErrorKind(err: unknown): ProviderErrorKind {
  if (err instanceof LegNotTaken) return 'not_taken';
  if (err instanceof ProviderInDoubt) return 'in_doubt';
  if (!(err instanceof Error)) return 'other';
  if (/ unreachable \([A-Z_]+\)/.test(err.message)) return 'not_taken';
  return /\bHTTP \d{3}\b/.test(err.message) ? 'http' : 'other';
}

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LEG_BUCKETS = [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600];

export class Metrics {
  readonly registry = new client.Registry();
  readonly httpRequests = new client.Counter({
    name: 'http_requests_total', help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const, registers: [this.registry],
  });
  readonly httpDuration = new client.Histogram({
    name: 'http_request_duration_seconds', help: 'HTTP request latency, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const, buckets: SECONDS_BUCKETS, registers: [this.registry],
  });
  readonly webhookAttempts = new client.Counter({
    name: 'webhook_delivery_attempts_total', help: 'Webhook delivery attempts, by outcome and trigger (scheduled or manual redelivery)',
    labelNames: ['outcome', 'trigger'] as const, registers: [this.registry],
  });
  readonly providerRequests = new client.Histogram({
    name: 'provider_request_duration_seconds', help: 'Calls to a mobile-money provider, by provider, operation (initiate, status, callback) and outcome',
    labelNames: ['provider', 'operation', 'outcome'] as const, buckets: SECONDS_BUCKETS, registers: [this.registry],
  });
  readonly providerErrors = new client.Counter({
    name: 'provider_errors_total', help: 'Provider calls that failed, by provider, operation and kind (not_taken, in_doubt, http, other)',
    labelNames: ['provider', 'operation', 'kind'] as const, registers: [this.registry],
  });
  readonly providerLegs = new client.Histogram({
    name: 'provider_leg_settle_seconds', help: 'Time from a provider leg\'s start to its settlement, by provider, kind and outcome',
    labelNames: ['provider', 'kind', 'outcome'] as const, buckets: LEG_BUCKETS, registers: [this.registry],
  });
  private readonly projectionLag = new client.Gauge({
    name: 'projection_lag_events', help: 'Events a projection has not applied yet', labelNames: ['projection'] as const, registers: [this.registry],
  });
  private readonly projectionCheckpoint = new client.Gauge({
    name: 'projection_checkpoint_position', help: 'Global position a projection has applied up to', labelNames: ['projection'] as const, registers: [this.registry],
  });
  private readonly head = new client.Gauge({
    name: 'event_store_head_position', help: 'Global position of the newest readable event', registers: [this.registry],
  });
  private readonly forwarderLag = new client.Gauge({
    name: 'event_forwarder_lag_events', help: 'Events stored but not yet safely handed to the bus', registers: [this.registry],
  });
  private readonly leasedWorkerRunning = new client.Gauge({
    name: 'leased_worker_running', help: 'Whether this process runs the worker that one process at a time runs (1) or waits to take it over (0)',
    labelNames: ['worker'] as const, registers: [this.registry],
  });
  private readonly busPending = new client.Gauge({
    name: 'bus_consumer_pending_messages', help: 'Messages a durable bus consumer has not settled yet (queued, in flight, waiting for a redelivery)',
    labelNames: ['durable'] as const, registers: [this.registry],
  });
  private readonly jobsWaiting = new client.Gauge({
    name: 'scheduler_jobs', help: 'Durable jobs waiting, by kind and whether they are due now',
    labelNames: ['kind', 'state'] as const, registers: [this.registry],
  });
  private readonly pendingLegs = new client.Gauge({
    name: 'provider_pending_legs', help: 'Legs a provider has that are not final yet (their status checks scheduled), by provider',
    labelNames: ['provider'] as const, registers: [this.registry],
  });
  private readonly oldestPendingLeg = new client.Gauge({
    name: 'provider_oldest_pending_leg_seconds', help: 'Age of the oldest leg a provider has that is not final yet (0 when none), by provider',
    labelNames: ['provider'] as const, registers: [this.registry],
  });
  private readonly scrapeErrors = new client.Counter({
    name: 'metrics_source_errors_total', help: 'State sources that failed during a scrape', labelNames: ['source'] as const, registers: [this.registry],
  });
  private sources: StateSources | undefined;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false) client.collectDefaultMetrics({ register: this.registry });
  }

  /** Where the state gauges are read from (set once the services exist). */
  watch(sources: StateSources): void {
    this.sources = sources;
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** Times `fn` as a provider call; the outcome is `ok` or `error` (it threw), and an error is counted by its kind. */
  async timeProvider<T>(provider: string, operation: string, fn: () => Promise<T>): Promise<T> {
    const end = this.providerRequests.startTimer({ provider, operation });
    try {
      const r = await fn();
      end({ outcome: 'ok' });
      return r;
    } catch (err) {
      end({ outcome: 'error' });
      this.providerErrors.inc({ provider, operation, kind: providerErrorKind(err) });
      throw err;
    }
  }

  private async refresh(log?: Logger): Promise<void> {
    const s = this.sources;
    if (!s) return;
    const guard = async (source: string, fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (err) {
        this.scrapeErrors.inc({ source });
        log?.warn({ err, source }, 'metrics source failed');
      }
    };
    await guard('projections', async () => {
      const rows = await s.projections();
      this.projectionLag.reset();
      this.projectionCheckpoint.reset();
      for (const r of rows) {
        this.projectionLag.set({ projection: r.projection }, r.lag);
        this.projectionCheckpoint.set({ projection: r.projection }, Number(r.checkpoint));
        this.head.set(Number(r.head));
      }
    });
    await guard('forwarder', async () => this.forwarderLag.set(await s.forwarderLag()));
    await guard('leases', async () => {
      const rows = await s.leasedWorkers();
      this.leasedWorkerRunning.reset();
      for (const r of rows) this.leasedWorkerRunning.set({ worker: r.worker }, r.running ? 1 : 0);
    });
    await guard('bus', async () => {
      const rows = await s.busLag();
      this.busPending.reset();
      for (const r of rows) this.busPending.set({ durable: r.durable }, r.pending);
    });
    await guard('jobs', async () => {
      const rows = await s.jobs();
      this.jobsWaiting.reset();
      for (const r of rows) {
        this.jobsWaiting.set({ kind: r.kind, state: 'due' }, r.due);
        this.jobsWaiting.set({ kind: r.kind, state: 'scheduled' }, r.waiting - r.due);
      }
    });
    await guard('provider_legs', async () => {
      const rows = await s.pendingLegs();
      this.pendingLegs.reset();
      this.oldestPendingLeg.reset();
      for (const r of rows) {
        this.pendingLegs.set({ provider: r.provider }, r.pending);
        this.oldestPendingLeg.set({ provider: r.provider }, r.oldestSeconds);
      }
    });
  }

  /** The exposition text for a scrape. */
  async render(log?: Logger): Promise<{ contentType: string; text: string }> {
    await this.refresh(log);
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

export function webhookOutcome(r: { ok: boolean; statusCode: number | null; error: string | null }, configured: boolean): WebhookOutcome {
  if (!configured) return 'not_configured';
  if (r.ok) return 'delivered';
  return r.statusCode !== null ? 'http_error' : 'network_error';
}
