// The service under test as a child process, started as in production (`bin/service`: the build in
// dist/, which `buildService` makes once per run, as `npm start` does before it) on its own database,
// NATS prefix, port and data directory, with its resident memory sampled from /proc while it runs.
// Without a database URL, the embedded mode: the service starts its own PostgreSQL under
// $DATA_DIR/postgres (separate processes, counted in its memory) and runs its bus in-process.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort, waitForHttp } from './net.ts';
import { embeddedDatabaseUrl } from '../../infra/db.ts';
import { benchDataDir, embeddedServerCpuMs, embeddedServerPids, hwmKb, pssKb, removeDataDir, rssKb, natsServerCpuClock, processCpuMs, serverCpuClock } from './embedded.ts';

/** The run's JetStream stream (its consumers go with it), as test/helpers/app.ts does. */
async function dropNatsStream(prefix: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    await (await jetstreamManager(nc)).streams.delete(`${prefix}_bus`).catch(() => false);
  } finally {
    await nc.close();
  }
}

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let built = false;
/** `npm run build`, once per bench run: the scenarios measure the code as it is now. */
export function buildService(): void {
  if (built) return;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  built = true;
}
export const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
export const NATS_URL = process.env.BENCH_NATS_URL || 'nats://127.0.0.1:4222';

export interface Service {
  url: string;
  pid: number;
  natsPrefix: string;
  /**
   * The memory figure, in MB: the service process's highest VmRSS seen by the sampler or the
   * kernel's VmHWM (the larger of the two); embedded, plus the highest memory its PostgreSQL's
   * processes (postmaster and the processes it forked) were seen to hold together (ServiceMemory).
   */
  peakRssMb(): number;
  /** The figure's parts (embedded: the PostgreSQL processes' own peaks too), in MB. */
  memory(): ServiceMemory;
  /** Resets the sampler's peaks (VmHWM cannot be reset: it covers the whole process life). */
  resetPeak(): void;
  /** CPU time the service process has used so far (user + system, all its threads), in ms. */
  cpuMs(): number;
  /**
   * CPU time its PostgreSQL's processes have used so far, in ms: embedded, its own server's; with an
   * external database, that whole server's when it runs on this machine (null when it does not).
   */
  postgresCpuMs(): number | null;
  /** The service's database: DATABASE_URL, or the embedded server's database under its DATA_DIR. */
  databaseUrl(): Promise<string>;
  /** With an external database: CPU time the local NATS server has used so far, in ms (null when it is elsewhere, and embedded). */
  natsCpuMs(): number | null;
  stop(): Promise<void>;
}

/** utime + stime of a process, in ms; 0 once it is gone. */
export const cpuMsOf = (pid: number): number => processCpuMs(pid) ?? 0;

export interface ServiceMemory {
  /** The service process alone: the larger of the sampled VmRSS peak and VmHWM. */
  serviceMb: number;
  /**
   * Embedded only (else null): the highest total proportional set size (PSS) of the PostgreSQL
   * processes seen at once, which counts each page they share (the shared_buffers segment, the
   * binary, what a backend inherited from the postmaster) once among them: the memory the server
   * holds. Their VmRSS summed counts such a page once per process (postgresRssSumMb).
   */
  postgresMb: number | null;
  /** Embedded only: the highest sum of the PostgreSQL processes' VmRSS seen at once (an over-count, for reference). */
  postgresRssSumMb: number | null;
  /** Embedded only: the most PostgreSQL processes seen at once. */
  postgresProcesses: number | null;
  /** The figure peakRssMb() answers: serviceMb, plus postgresMb embedded (each part's own peak: an upper bound). */
  totalMb: number;
}

export async function startService(opts: {
  /** undefined: the embedded mode (its own PostgreSQL under $DATA_DIR/postgres, in-process bus). */
  databaseUrl: string | undefined;
  env?: Record<string, string>;
  nodeArgs?: string[];
  label: string;
}): Promise<Service> {
  const port = await freePort();
  const embedded = !opts.databaseUrl;
  // Embedded: 0755, so that the server's user (`postgres`, when the bench runs as root) reaches it.
  const dataDir = embedded ? benchDataDir('mpa-bench-') : fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-bench-'));
  const natsPrefix = `bench${randomBytes(4).toString('hex')}`;
  const logFile = path.join(os.tmpdir(), `mpa-bench-${opts.label}-${process.pid}.log`);
  const log = fs.openSync(logFile, 'w');
  const inherited = { ...process.env };
  for (const k of ['DATABASE_URL', 'NATS_URL', 'NATS_PREFIX', 'EVENTSTORE_URL']) delete inherited[k];
  // BENCH_SERVICE_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles any scenario's
  // service; bin/service passes SERVICE_NODE_OPTIONS to node (NODE_OPTIONS refuses --cpu-prof).
  const extraArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const nodeOptions = [...(opts.nodeArgs ?? []), ...extraArgs].join(' ');
  buildService();
  const child: ChildProcess = spawn(path.join(ROOT, 'bin/service'), [], {
    cwd: ROOT,
    env: {
      ...inherited,
      ...(nodeOptions ? { SERVICE_NODE_OPTIONS: nodeOptions } : {}),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl, NATS_URL, NATS_PREFIX: natsPrefix } : {}),
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      // One load generator from one address: the per-key limits would measure themselves.
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      AUTH_FAILURES_PER_WINDOW: '1000000',
      ALLOW_PRIVATE_URLS: 'true', // the webhook receiver is on 127.0.0.1
      ...opts.env,
    },
    stdio: ['ignore', log, log],
  });
  let exited = false;
  const exitedP = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  const pid = child.pid!;
  // Peaks in kB: the service's VmRSS every 100 ms; embedded, its PostgreSQL's processes (found
  // anew each time: backends come and go) every 500 ms, as PSS costs the kernel a walk of every
  // mapping (about half a millisecond a process), which the bench process, also the load
  // generator, should not spend ten times a second.
  const peak = { service: 0, postgresPss: 0, postgresRss: 0, processes: 0 };
  let ticks = 0;
  const samplePostgres = () => {
    const pids = embeddedServerPids(dataDir);
    peak.postgresPss = Math.max(peak.postgresPss, pids.reduce((sum, p) => sum + pssKb(p), 0));
    peak.postgresRss = Math.max(peak.postgresRss, pids.reduce((sum, p) => sum + rssKb(p), 0));
    peak.processes = Math.max(peak.processes, pids.length);
  };
  const sample = () => {
    peak.service = Math.max(peak.service, rssKb(pid));
    if (embedded && ticks++ % 5 === 0) samplePostgres();
  };
  const sampler = setInterval(sample, 100);
  sampler.unref();
  const url = `http://127.0.0.1:${port}`;
  const stopChild = async (signal: NodeJS.Signals) => {
    if (!exited) {
      child.kill(signal);
      const hard = setTimeout(() => child.kill('SIGKILL'), 25_000);
      await exitedP;
      clearTimeout(hard);
    }
    fs.closeSync(log);
    // SIGTERM stops the service's PostgreSQL with it; after a SIGKILL it still runs: stopped here.
    if (embedded) await removeDataDir(dataDir);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/readyz`, 60_000, () => !exited);
  } catch (err) {
    clearInterval(sampler);
    const tail = fs.readFileSync(logFile, 'utf8').slice(-2000);
    await stopChild('SIGKILL');
    throw new Error(`${(err as Error).message}; see ${logFile}:\n${tail}`);
  }
  const externalCpu = opts.databaseUrl ? await serverCpuClock(opts.databaseUrl) : undefined;
  const natsCpu = opts.databaseUrl ? natsServerCpuClock(NATS_URL) : undefined;
  const mb = (kb: number) => kb / 1024;
  const memory = (): ServiceMemory => {
    const service = Math.max(peak.service, rssKb(pid), hwmKb(pid));
    if (!embedded) return { serviceMb: mb(service), postgresMb: null, postgresRssSumMb: null, postgresProcesses: null, totalMb: mb(service) };
    samplePostgres();
    return {
      serviceMb: mb(service), postgresMb: mb(peak.postgresPss), postgresRssSumMb: mb(peak.postgresRss), postgresProcesses: peak.processes,
      totalMb: mb(service + peak.postgresPss),
    };
  };
  return {
    url, pid, natsPrefix,
    peakRssMb: () => memory().totalMb,
    memory,
    resetPeak: () => { peak.service = 0; peak.postgresPss = 0; peak.postgresRss = 0; peak.processes = 0; },
    cpuMs: () => cpuMsOf(pid),
    postgresCpuMs: () => (embedded ? embeddedServerCpuMs(dataDir) : externalCpu?.() ?? null),
    natsCpuMs: () => natsCpu?.() ?? null,
    databaseUrl: async () => opts.databaseUrl ?? (await embeddedDatabaseUrl(dataDir, () => undefined, false))!.url,
    async stop() {
      clearInterval(sampler);
      await stopChild('SIGTERM');
      if (opts.databaseUrl) await dropNatsStream(natsPrefix).catch(() => undefined);
    },
  };
}
