// The service under test as a child process, started as in production (`bin/service`: the build in
// dist/, which `buildService` makes once per run, as `npm start` does before it) on its own database,
// NATS prefix, port and data directory, with its resident memory sampled from /proc while it runs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort, waitForHttp } from './net.ts';

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
  /** Highest VmRSS seen by the sampler and the kernel's VmHWM, in MB (the larger of the two). */
  peakRssMb(): number;
  /** Resets the sampler's peak (VmHWM cannot be reset: it covers the whole process life). */
  resetPeak(): void;
  /** CPU time the service process has used so far (user + system, all its threads), in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** utime + stime of a process from /proc/<pid>/stat, in ms (clock ticks are 100 per second on Linux). */
function cpuMsOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export async function startService(opts: {
  /** undefined: the embedded mode (PGlite under the data directory, in-process bus). */
  databaseUrl: string | undefined;
  env?: Record<string, string>;
  nodeArgs?: string[];
  label: string;
}): Promise<Service> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-bench-'));
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
  let peak = 0;
  const sampler = setInterval(() => { peak = Math.max(peak, statusKb(pid, 'VmRSS')); }, 100);
  sampler.unref();
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/readyz`, 60_000, () => !exited);
  } catch (err) {
    clearInterval(sampler);
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}; see ${logFile}:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
  }
  return {
    url, pid, natsPrefix,
    peakRssMb: () => Math.max(peak, statusKb(pid, 'VmHWM'), statusKb(pid, 'VmRSS')) / 1024,
    resetPeak: () => { peak = 0; },
    cpuMs: () => cpuMsOf(pid),
    async stop() {
      clearInterval(sampler);
      if (!exited) {
        child.kill('SIGTERM');
        const hard = setTimeout(() => child.kill('SIGKILL'), 25_000);
        await exitedP;
        clearTimeout(hard);
      }
      fs.closeSync(log);
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (opts.databaseUrl) await dropNatsStream(natsPrefix).catch(() => undefined);
    },
  };
}
