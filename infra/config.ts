// Configuration is read once from the environment, validated, typed, and passed in.
// Nothing in the service's code reads process.env except this file.
import path from 'node:path';
import { parseCrashSpec } from './crash-points.ts';
import { providerSettings, type ProviderSettings } from './provider-config.ts';
import { DEFAULT_HEAP_GROWING_PERCENT } from './heap-growth.ts';
import type { LogFormat } from './log.ts';

export type Role = 'api' | 'worker' | 'all';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  natsUrl: string | undefined;
  natsPrefix: string;
  eventstoreUrl: string | undefined;
  adminToken: string | undefined;
  role: Role;
  quoteTtlSeconds: number;
  webhookRetryScheduleSeconds: number[];
  webhookTimeoutMs: number;
  sandboxSettleMs: number;
  allowPrivateUrls: boolean;
  /** One KYC file fetch (every redirect, the headers and the whole body) must finish within this. */
  kycFetchTimeoutMs: number;
  logLevel: string;
  /** `LOG_FORMAT`: pretty lines when stdout is a terminal and JSON lines otherwise (`auto`), or always one of them. */
  logFormat: LogFormat;
  /** Server key for API-secret hashes and sealed secrets; generated into DATA_DIR when unset. */
  secretHashKey: string | undefined;
  /** Requests per second per API key (token bucket refill); 0 disables. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** Failed authentications allowed per key and per client address in one window. */
  authFailuresPerWindow: number;
  authFailureWindowSeconds: number;
  /** The payer's page (pay/, public): requests per minute per client address, and payment attempts per minute per address (three times as many per link). */
  payRequestsPerMinute: number;
  paySubmitsPerMinute: number;
  /** A client must have sent a request's headers within this (slowloris); then the whole request within httpRequestTimeoutMs. */
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  /** How long NATS waits for a consumer's outcome before redelivering to another process. */
  busAckWaitMs: number;
  /** How long a claimed job is held before another process may take it over (its process died). */
  jobLeaseMs: number;
  /** How long an Idempotency-Key claim holds without a renewal (its holder renews it every third). */
  idempotencyLeaseMs: number;
  /**
   * Which events the forwarder puts on the bus: `consumed` (the types some worker of this service
   * consumes) or `all` (the whole global order, for consumers outside the service, e.g. an audit tap).
   */
  busForward: 'consumed' | 'all';
  /** Dashboard session cookie `Secure` (and `__Host-` name): 'auto' = when the request came over https. */
  dashboardCookieSecure: 'auto' | 'always' | 'never';
  /** A dashboard session ends after this long without a request. */
  dashboardSessionIdleMinutes: number;
  /** V8's heap growing factor, as 1 + percent/100 after each full collection; 0 = V8's own (infra/heap-growth.ts). */
  heapGrowingPercent: number;
  /** GET /events/stream (CONTRACT §12): a comment on an idle stream every this many ms. */
  eventStreamHeartbeatMs: number;
  /** Open event streams one merchant may hold (all API processes together); past it, 429 rate_limited. */
  eventStreamsPerMerchant: number;
  /** An open stream's slot lease outlives its last renewal by this (renewed every third): a dead process's slots free after it. */
  eventStreamLeaseMs: number;
  /** How often the event streams look for new events when no NOTIFY has woken them (a lost one). */
  eventStreamPollMs: number;
  /** TEST ONLY (`CRASH_AT`): crash points armed by the crash-consistency suite (infra/crash-points.ts). */
  crashAt: string | undefined;
  /** Real operator connections (CONTRACT §15): MTN MoMo and pawaPay when configured; the sandbox always. */
  providers: ProviderSettings;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min) throw new ConfigError(`${name} must be at least ${min}`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false`);
}

function schedule(raw: string | undefined): number[] {
  const text = raw && raw.trim() !== '' ? raw : '60,300,900,3600,14400,43200';
  const parts = text.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^[0-9]+(\.[0-9]+)?$/.test(p))) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds');
  }
  return parts.map(Number);
}

function busForward(raw: string | undefined): 'consumed' | 'all' {
  if (raw === undefined || raw === '' || raw === 'consumed') return 'consumed';
  if (raw === 'all') return 'all';
  throw new ConfigError('BUS_FORWARD must be consumed or all');
}

function logFormat(raw: string | undefined): LogFormat {
  const value = (raw ?? '').toLowerCase();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'json' || value === 'pretty') return value;
  throw new ConfigError('LOG_FORMAT must be auto, json or pretty');
}

function crashSpec(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  try {
    parseCrashSpec(raw);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return raw;
}

function cookieSecure(raw: string | undefined): Config['dashboardCookieSecure'] {
  const value = (raw ?? '').toLowerCase();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'true' || value === 'always') return 'always';
  if (value === 'false' || value === 'never') return 'never';
  throw new ConfigError('DASHBOARD_COOKIE_SECURE must be auto, true or false');
}

function roleFrom(argv: string[]): Role {
  const i = argv.indexOf('--role');
  const value = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--role='))?.slice(7);
  if (value === undefined) return 'all';
  if (value === 'api' || value === 'worker' || value === 'all') return value;
  throw new ConfigError(`--role must be api, worker or all, got "${value}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv.slice(2)): Config {
  const eventstoreUrl = env.EVENTSTORE_URL || undefined;
  if (eventstoreUrl && !/^(kurrentdb|esdb|kdb)(\+discover)?:\/\//.test(eventstoreUrl)) {
    throw new ConfigError('EVENTSTORE_URL must start with kurrentdb:// or esdb://');
  }
  return {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 3000),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    natsUrl: env.NATS_URL || undefined,
    natsPrefix: env.NATS_PREFIX || 'payments',
    eventstoreUrl,
    adminToken: env.ADMIN_TOKEN || undefined,
    role: roleFrom(argv),
    quoteTtlSeconds: int(env, 'QUOTE_TTL_SECONDS', 900, 1),
    webhookRetryScheduleSeconds: schedule(env.WEBHOOK_RETRY_SCHEDULE),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10000, 1),
    sandboxSettleMs: int(env, 'SANDBOX_SETTLE_MS', 2000),
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS'),
    kycFetchTimeoutMs: int(env, 'KYC_FETCH_TIMEOUT_MS', 15_000, 1),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormat(env.LOG_FORMAT),
    secretHashKey: env.SECRET_HASH_KEY || undefined,
    rateLimitPerSecond: int(env, 'RATE_LIMIT_PER_SECOND', 100),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 200, 1),
    payRequestsPerMinute: int(env, 'PAY_REQUESTS_PER_MINUTE', 120, 1),
    paySubmitsPerMinute: int(env, 'PAY_SUBMITS_PER_MINUTE', 10, 1),
    authFailuresPerWindow: int(env, 'AUTH_FAILURES_PER_WINDOW', 20, 1),
    authFailureWindowSeconds: int(env, 'AUTH_FAILURE_WINDOW_SECONDS', 60, 1),
    httpHeadersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 20_000, 100),
    httpRequestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100),
    busAckWaitMs: int(env, 'BUS_ACK_WAIT_MS', 30_000, 1000),
    jobLeaseMs: int(env, 'JOB_LEASE_MS', 60_000, 1000),
    idempotencyLeaseMs: int(env, 'IDEMPOTENCY_LEASE_MS', 30_000, 300),
    busForward: busForward(env.BUS_FORWARD),
    dashboardCookieSecure: cookieSecure(env.DASHBOARD_COOKIE_SECURE),
    dashboardSessionIdleMinutes: int(env, 'DASHBOARD_SESSION_IDLE_MINUTES', 720, 1),
    heapGrowingPercent: int(env, 'HEAP_GROWING_PERCENT', DEFAULT_HEAP_GROWING_PERCENT),
    eventStreamHeartbeatMs: int(env, 'EVENT_STREAM_HEARTBEAT_MS', 15_000, 10),
    eventStreamsPerMerchant: int(env, 'EVENT_STREAMS_PER_MERCHANT', 5, 1),
    eventStreamLeaseMs: int(env, 'EVENT_STREAM_LEASE_MS', 30_000, 300),
    eventStreamPollMs: int(env, 'EVENT_STREAM_POLL_MS', 1_000, 10),
    crashAt: crashSpec(env.CRASH_AT),
    providers: providerSettings(env, {
      timeoutMs: int(env, 'PROVIDER_TIMEOUT_MS', 15_000, 100),
      pendingAlertSeconds: int(env, 'PROVIDER_PENDING_ALERT_SECONDS', 3600, 1),
      firstCheckMs: int(env, 'PROVIDER_FIRST_CHECK_MS', 5_000, 10),
      allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS'),
    }, (message) => new ConfigError(message)),
  };
}
