// The embedded PostgreSQL (infra/embedded-postgres.ts) as the bench uses it: data directories
// the server's user can reach, a server of the bench's own for a ceiling (stopped afterwards, also
// on failure), and the memory of a server's processes, read from /proc.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedDatabaseUrl } from '../../infra/db.ts';
import { stopEmbeddedPostgres } from '../../infra/embedded-postgres.ts';

/**
 * A fresh directory under the temp dir, 0755: as root the server runs as the `postgres` user, which
 * must traverse it (mkdtemp makes 0700 directories).
 */
export function benchDataDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/** Stops whatever embedded server still runs under `dataDir` (a killed service's), then removes it. */
export async function removeDataDir(dataDir: string): Promise<void> {
  await stopEmbeddedPostgres(dataDir).catch(() => undefined);
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/**
 * `fn` with the URL of a database on an embedded PostgreSQL of its own (the same server, settings
 * and database the service's embedded mode uses), started in a fresh directory; the server is
 * stopped and the directory removed afterwards, whatever happens.
 */
export async function withEmbeddedDatabase<T>(label: string, fn: (url: string) => Promise<T>, log: (s: string) => void = () => undefined): Promise<T> {
  const dir = benchDataDir(`mpa-bench-${label}-`);
  try {
    const embedded = await embeddedDatabaseUrl(dir, log);
    if (!embedded) throw new Error(`no embedded PostgreSQL started in ${dir}`);
    try {
      return await fn(embedded.url);
    } finally {
      await embedded.server.stop();
    }
  } finally {
    await removeDataDir(dir);
  }
}

/** A number from /proc/<pid>/<file> ("Field:   123 kB"), in kB; 0 when the process is gone. */
function procKb(pid: number, file: 'status' | 'smaps_rollup', field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/${file}`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export const rssKb = (pid: number): number => procKb(pid, 'status', 'VmRSS');
export const hwmKb = (pid: number): number => procKb(pid, 'status', 'VmHWM');
/** Proportional set size: resident memory with each shared page divided among the processes mapping it. */
export const pssKb = (pid: number): number => procKb(pid, 'smaps_rollup', 'Pss');

/** The pids whose parent is `ppid`, from /proc/<pid>/stat. */
function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    // pid (comm) state ppid …: comm may hold spaces and parentheses (statFields splits after the last ')').
    if (Number(statFields(Number(e))?.[1]) === ppid) out.push(Number(e));
  }
  return out;
}

/**
 * The processes of the embedded PostgreSQL under `dataDir`: its postmaster (line 1 of
 * <dataDir>/postgres/data/postmaster.pid, when that process's command line names the data
 * directory) and the processes it forked (backends, checkpointer, WAL writer, autovacuum…).
 * Empty when no server runs there (yet).
 */
export function embeddedServerPids(dataDir: string): number[] {
  return serverPids(path.join(dataDir, 'postgres', 'data'));
}

/** The same for any PostgreSQL server on this machine, by its data directory (`SHOW data_directory`). */
function serverPids(data: string): number[] {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return [];
  }
  if (!Number.isInteger(pid) || pid <= 0) return [];
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(data)) return [];
  } catch {
    return [];
  }
  return [pid, ...childrenOf(pid)];
}

/** Fields of /proc/<pid>/stat after the command name: [0] is the state, [1] the ppid, [11..14] utime, stime, cutime, cstime. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time the embedded PostgreSQL under `dataDir` has used so far, in ms (clock ticks are 100 per
 * second on Linux): its postmaster's own and that of the children it has reaped (backends that
 * ended), plus its live children's. 0 when no server runs there.
 */
export function embeddedServerCpuMs(dataDir: string): number {
  return serverCpuMs(path.join(dataDir, 'postgres', 'data')) ?? 0;
}

/**
 * The same for any PostgreSQL server on this machine, by its data directory; undefined when no
 * server of this machine runs there (a remote server, or a directory this process cannot read).
 */
export function serverCpuMs(data: string): number | undefined {
  const [postmaster, ...children] = serverPids(data);
  if (postmaster === undefined) return undefined;
  let ticks = 0;
  const f = statFields(postmaster);
  if (f) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const pid of children) {
    const c = statFields(pid);
    if (c) ticks += Number(c[11]) + Number(c[12]);
  }
  return ticks * 10;
}

/**
 * A clock of the CPU time the PostgreSQL server behind `url` has used (ms), when that server runs on
 * this machine and its data directory is readable here; undefined otherwise (a remote server, or a
 * role that may not read `data_directory`). The server's whole CPU: the bench's is its only load.
 */
export async function serverCpuClock(url: string): Promise<(() => number | undefined) | undefined> {
  const c = new pg.Client({ connectionString: url });
  let data: string;
  try {
    await c.connect();
    data = (await c.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
  } catch {
    return undefined; // a figure left out, never a scenario (or a started service) abandoned
  } finally {
    await c.end().catch(() => undefined);
  }
  return serverCpuMs(data) === undefined ? undefined : () => serverCpuMs(data);
}

/**
 * A clock of the CPU time (ms) of the NATS server behind `url`, when it is the one `nats-server`
 * process of this machine and `url` names a loopback address; undefined otherwise.
 */
export function natsServerCpuClock(url: string): (() => number | undefined) | undefined {
  let host: string;
  let entries: string[];
  try {
    host = new URL(url.includes('://') ? url : `nats://${url}`).hostname;
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined; // no /proc, or a URL this cannot read: the figure is left out
  }
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') return undefined;
  const pids = entries.filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'nats-server';
    } catch {
      return false;
    }
  });
  if (pids.length !== 1) return undefined;
  const pid = pids[0]!;
  return () => processCpuMs(pid);
}

/** utime + stime of a process from /proc/<pid>/stat, in ms (clock ticks are 100 per second on Linux); undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) * 10 : undefined;
}
