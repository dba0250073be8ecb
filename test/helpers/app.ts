// Starts the whole service in-process on a fresh database (PGlite, or a new PostgreSQL database
// when DATABASE_URL is set) and gives tests a small HTTP client for the operator and merchant APIs.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../infra/config.ts';
import { startApp, type RunningApp, type AppOptions } from '../../app/app.ts';
import { systemClock, type ManualClock, type Clock } from '../../infra/clock.ts';
import { createLogger } from '../../infra/log.ts';
import type { DestinationStream } from 'pino';
import { testDatabase, type TestDatabase } from './db.ts';
import { waitUntil } from './wait.ts';
import { readCheckpoint } from '../../infra/checkpoints.ts';
import { FORWARDER } from '../../workers/event-forwarder.ts';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export async function request(url: string, method: string, p: string, opts: { body?: unknown; headers?: Record<string, string>; raw?: string } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url + p, { method, headers, body: payload });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch { /* not JSON */ }
  return { status: res.status, body, headers: res.headers, text };
}

export interface MerchantCreds {
  merchantId: string;
  keyId: string;
  apiKey: string;
  apiSecret: string;
}

export interface TestApp {
  app: RunningApp;
  /** The database and data directory, for `startTestApp({ shareWith })`. */
  database: TestDatabase;
  dataDir: string;
  /** NATS_PREFIX of this app's bus when the suite runs on NATS (kept by a restart with shareWith). */
  natsPrefix: string | undefined;
  url: string;
  clock: Clock;
  config: Config;
  admin(method: string, p: string, body?: unknown): Promise<HttpResult>;
  /** A call with a merchant's credentials; `idem` adds an Idempotency-Key (a random one when true). */
  as(m: MerchantCreds, method: string, p: string, body?: unknown, opts?: { idem?: string | boolean; headers?: Record<string, string> }): Promise<HttpResult>;
  /** A new active merchant with one API key. */
  newMerchant(name?: string): Promise<MerchantCreds>;
  stop(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: ManualClock;
  resolver?: AppOptions['resolver'];
  /** A bus of the test's own (to observe or disturb what the workers consume). */
  bus?: AppOptions['bus'];
  /** Where the service's log lines go (set `env.LOG_LEVEL` too: tests log nothing by default). */
  logStream?: DestinationStream;
  /**
   * Run on another test app's database and data directory (same server key, same admin token): a
   * restart. That app must be stopped first (`other.app.stop()`); the database stays with it and is
   * dropped by its `stop()`, so stop this one first.
   */
  shareWith?: TestApp;
  /** The process's role (default all): `api` runs no worker, for a split deployment with a worker of the test's own. */
  role?: 'api' | 'worker' | 'all';
}

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const shared = opts.shareWith;
  const dataDir = shared ? shared.dataDir : fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-test-'));
  const tdb = shared ? shared.database : await testDatabase();
  // With NATS_URL set the whole service runs on JetStream, each test app under a prefix of its own
  // (a restart keeps it, as a redeployed service keeps its durable consumers).
  const natsUrl = opts.bus ? undefined : process.env.NATS_URL || undefined;
  const natsPrefix = natsUrl ? shared?.natsPrefix ?? `t${randomBytes(5).toString('hex')}` : undefined;
  const config = loadConfig({
    ...(natsUrl ? { NATS_URL: natsUrl, NATS_PREFIX: natsPrefix! } : {}),
    ADMIN_TOKEN, DATA_DIR: dataDir, SANDBOX_SETTLE_MS: '50', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ALLOW_PRIVATE_URLS: 'true',
    // Tests hammer the API from one address: limits high unless a test sets its own.
    RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', AUTH_FAILURES_PER_WINDOW: '100000',
    PAY_REQUESTS_PER_MINUTE: '1000000', PAY_SUBMITS_PER_MINUTE: '1000000',
    ...opts.env,
  }, opts.role ? ['--role', opts.role] : []);
  const clock: Clock = opts.clock ?? systemClock;
  const app = await startApp({
    config: { ...config, databaseUrl: tdb.url },
    database: tdb.db,
    clock,
    log: createLogger(config.logLevel, opts.logStream),
    port: 0,
    ...(opts.resolver ? { resolver: opts.resolver } : {}),
    ...(opts.bus ? { bus: opts.bus } : {}),
  });
  const url = app.url!;
  const admin = (method: string, p: string, body?: unknown) =>
    request(url, method, p, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const as: TestApp['as'] = (m, method, p, body, o = {}) => {
    const headers: Record<string, string> = { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret, ...(o.headers ?? {}) };
    if (o.idem) headers['idempotency-key'] = o.idem === true ? randomBytes(8).toString('hex') : o.idem;
    return request(url, method, p, { body, headers });
  };
  return {
    app, url, clock, config, database: tdb, dataDir, natsPrefix,
    admin, as,
    async newMerchant(name = 'Test merchant') {
      const m = await admin('POST', '/admin/merchants', { name });
      if (m.status !== 201) throw new Error(`merchant create failed: ${m.status} ${m.text}`);
      const k = await admin('POST', `/admin/merchants/${m.body.id}/api-keys`, {});
      if (k.status !== 201) throw new Error(`key create failed: ${k.status} ${k.text}`);
      return { merchantId: m.body.id, keyId: k.body.id, apiKey: k.body.api_key, apiSecret: k.body.api_secret };
    },
    async stop() {
      await app.stop();
      if (shared) return; // the database and directory belong to the app shared with
      if (natsUrl && natsPrefix) await dropNatsStream(natsUrl, natsPrefix);
      await tdb.teardown();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Removes a test app's JetStream stream (its consumers go with it). */
async function dropNatsStream(url: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`${prefix}_bus`).catch(() => false);
  } finally {
    await nc.close();
  }
}

/**
 * Waits until the app's workers have reacted to everything so far: the event forwarder's checkpoint
 * has passed the store's head as it is now (on the in-process bus the checkpoint only passes what
 * every consumer has settled), and every message published on that bus until now (a test's own
 * too) has been settled. What a worker would still do about those events has been done: the wait
 * before asserting that something did not happen (no second submission, no late delivery).
 */
export async function caughtUp(h: TestApp, what = 'the workers to settle everything appended and published so far'): Promise<void> {
  const s = h.app.services;
  const head = await s.store.head();
  const published = s.bus.backlog?.lastSeq() ?? 0;
  await waitUntil(`${what} (forwarder checkpoint at ${head})`, async () => (await readCheckpoint(s.knex, FORWARDER)) >= head);
  const backlog = s.bus.backlog;
  if (backlog) await waitUntil(`${what} (bus messages up to ${published})`, () => (backlog.lowestUnsettled() ?? Infinity) > published);
}
