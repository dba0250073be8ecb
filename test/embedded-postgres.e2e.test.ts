// Issue 30: the embedded default is a real PostgreSQL that the service runs itself under DATA_DIR.
// The service runs here as `npm start` runs it (app/main.ts as a child process, no DATABASE_URL):
// - first start: initdb under DATA_DIR (as root: owned by the postgres user, a 0700 directory above
//   made traversable), then SIGTERM stops the service and its server;
// - SIGKILL leaves the server running: the next start finds it (postmaster.pid), uses it, and every
//   acknowledged write is there; a stale postmaster.pid (its pid gone, or taken by another program)
//   never fails the start with "lock file exists";
// - a second service on the same DATA_DIR is refused;
// - as a normal user (here: root runs it as the unprivileged `postgres` user), the server runs as
//   that user.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { stopEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { EMBEDDED_POOL_MAX } from '../infra/db.ts';
import { embeddedServerPids } from '../bench/lib/embedded.ts';
import { request } from './helpers/app.ts';
import { freePort } from './helpers/net.ts';

const root = path.resolve(import.meta.dirname, '..');
const asRoot = process.getuid?.() === 0;
const ADMIN = 'embedded-postgres-test-admin';
const idOf = (flag: '-u' | '-g') => Number(execSync(`id ${flag} postgres`).toString().trim());

interface Service { child: ChildProcess; url: string; log: () => string; exited: Promise<number | null> }

async function start(dataDir: string, opts: { user?: string; expectFailure?: boolean } = {}): Promise<Service> {
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), DATA_DIR: dataDir, PORT: String(port), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' };
  const args = ['--import', 'tsx', path.join(root, 'app/main.ts')];
  const child = opts.user
    ? spawn('runuser', ['-u', opts.user, '--', process.execPath, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c) => { out += c; });
  child.stderr!.on('data', (c) => { out += c; });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 90_000;
  while (Date.now() < until && child.exitCode === null && !opts.expectFailure) {
    const r = await request(url, 'GET', '/readyz').catch(() => undefined);
    if (r?.status === 200) break;
    await new Promise((r2) => setTimeout(r2, 200));
  }
  if (opts.expectFailure) await exited;
  return { child, url, log: () => out, exited };
}

const postmasterPid = (dataDir: string) => {
  try {
    return Number(fs.readFileSync(path.join(dataDir, 'postgres', 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
};
/** Running: there, and not a zombie (this machine's init reaps orphans late, if ever). */
const alive = (pid: number | undefined) => {
  if (!pid) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

function tempDataDir(t: Test, mode = 0o700): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-embedded-'));
  fs.chmodSync(parent, mode);
  const dataDir = path.join(parent, 'data');
  t.teardown(async () => {
    await stopEmbeddedPostgres(dataDir);
    fs.rmSync(parent, { recursive: true, force: true });
  });
  return dataDir;
}

t.test('first start, a SIGKILL that leaves the server running, a start that uses it, SIGTERM that stops both', { timeout: 240_000 }, async (t) => {
  const dataDir = tempDataDir(t); // under a 0700 directory, as mktemp -d makes them
  const first = await start(dataDir);
  t.teardown(() => { first.child.kill('SIGKILL'); });
  t.equal((await request(first.url, 'GET', '/readyz')).status, 200, `ready on a new DATA_DIR (${first.log().slice(-400)})`);
  t.ok(fs.existsSync(path.join(dataDir, 'postgres', 'data', 'PG_VERSION')), 'initdb ran under DATA_DIR/postgres');
  const conf = fs.readFileSync(path.join(dataDir, 'postgres', 'data', 'postgresql.conf'), 'utf8');
  t.match(conf, /fsync = on/);
  t.match(conf, /autovacuum = on/);
  t.match(conf, /listen_addresses = '127\.0\.0\.1'/);
  if (asRoot) {
    t.equal(fs.statSync(path.join(dataDir, 'postgres', 'data')).uid, idOf('-u'), 'as root: the data belongs to the postgres user');
    t.match(first.log(), /gave others search permission \(o\+x\)/, 'the 0700 directory above was made traversable, and the log says so');
  }
  // An acknowledged write: a merchant.
  const made = await request(first.url, 'POST', '/admin/merchants', { body: { name: 'Survivor' }, headers: { authorization: `Bearer ${ADMIN}` } });
  t.equal(made.status, 201);

  const pid = postmasterPid(dataDir);
  first.child.kill('SIGKILL');
  await first.exited;
  t.ok(alive(pid), 'the SIGKILLed service left its PostgreSQL running');

  const second = await start(dataDir);
  t.teardown(() => { second.child.kill('SIGKILL'); });
  t.equal((await request(second.url, 'GET', '/readyz')).status, 200, `the next start is ready (${second.log().slice(-400)})`);
  t.match(second.log(), /embedded PostgreSQL found running/, 'it found the server');
  t.equal(postmasterPid(dataDir), pid, 'and uses it');
  const read = await request(second.url, 'GET', `/admin/merchants/${made.body.id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  t.equal(read.status, 200, 'the acknowledged write is there');

  const third = await start(dataDir, { expectFailure: true });
  t.not(await third.exited, 0, 'a second service on the same DATA_DIR is refused');
  t.match(third.log(), /in use by the service with process id/);

  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0, 'SIGTERM: exits 0');
  t.notOk(alive(pid), 'and its PostgreSQL stopped cleanly');
  t.notOk(fs.existsSync(path.join(dataDir, 'postgres', 'data', 'postmaster.pid')), 'no postmaster.pid left');
  t.match(fs.readFileSync(path.join(dataDir, 'postgres', 'server.log'), 'utf8'), /database system is shut down/, 'a clean shutdown');
});

t.test('a stale postmaster.pid (the pid gone, or another program\'s now) never fails the start', { timeout: 240_000 }, async (t) => {
  const dataDir = tempDataDir(t);
  const first = await start(dataDir);
  t.equal((await request(first.url, 'GET', '/readyz')).status, 200);
  const pid = postmasterPid(dataDir)!;
  first.child.kill('SIGKILL');
  await first.exited;
  // A power cut: the server and its processes (its own process group) die without a word, its
  // postmaster.pid stays.
  process.kill(-pid, 'SIGKILL');
  while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
  const pidFile = path.join(dataDir, 'postgres', 'data', 'postmaster.pid');
  const stale = fs.readFileSync(pidFile, 'utf8');
  // Its pid taken by another program (this test's own process).
  fs.writeFileSync(pidFile, stale.replace(/^\d+/, String(process.pid)));
  const second = await start(dataDir);
  t.teardown(() => { second.child.kill('SIGKILL'); });
  t.equal((await request(second.url, 'GET', '/readyz')).status, 200, `started despite the stale file (${second.log().slice(-600)})`);
  t.not(postmasterPid(dataDir), process.pid, 'a server of its own, recovered from the crash');
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});

/** Whether the postgres user can read this checkout (it may sit under a directory only root enters). */
const checkoutReadable = () => {
  try {
    execSync(`runuser -u postgres -- test -r ${JSON.stringify(path.join(root, 'app/main.ts'))}`);
    return true;
  } catch {
    return false;
  }
};
const unprivilegedSkip = !asRoot ? 'runs when the suite runs as root (it starts the service as the postgres user)'
  : !checkoutReadable() ? 'the postgres user cannot read this checkout' : false;

t.test('run by an unprivileged user, the server runs as that user', { timeout: 240_000, skip: unprivilegedSkip }, async (t) => {
  const dataDir = tempDataDir(t, 0o755);
  fs.mkdirSync(dataDir);
  fs.chownSync(dataDir, idOf('-u'), idOf('-g'));
  const svc = await start(dataDir, { user: 'postgres' });
  t.teardown(() => { svc.child.kill('SIGKILL'); });
  t.equal((await request(svc.url, 'GET', '/readyz')).status, 200, `ready (${svc.log().slice(-600)})`);
  const pid = postmasterPid(dataDir)!;
  const uid = Number(/Uid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  t.equal(uid, fs.statSync(dataDir).uid, 'the server runs as the service\'s own user');
  svc.child.kill('SIGTERM');
  await svc.exited;
  t.notOk(alive(pid), 'stopped with the service');
});

/** The postmaster's children by their process titles (`postgres: io worker 0`, `postgres: postgres payments 127.0.0.1(…) idle`). */
function serverProcesses(dataDir: string): string[] {
  return embeddedServerPids(dataDir).slice(1).map((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      return ''; // ended meanwhile
    }
  }).filter(Boolean);
}

t.test('a small server for one service: no I/O workers, no replication launcher, the pool\'s connections at most under a burst', { timeout: 240_000 }, async (t) => {
  // Each of these processes is memory on the service's own machine (bench/PROFILE.md §29: the
  // embedded service and its server under 300 MB): a backend per connection is 5 to 12 MB.
  const dataDir = tempDataDir(t, 0o755);
  const svc = await start(dataDir);
  t.teardown(() => { svc.child.kill('SIGKILL'); });
  t.equal((await request(svc.url, 'GET', '/readyz')).status, 200, `ready (${svc.log().slice(-400)})`);
  const auth = { authorization: `Bearer ${ADMIN}` };
  // 60 requests at once, each reading the read models: the pool opens every connection it may.
  const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => i % 4 === 0
    ? request(svc.url, 'POST', '/admin/merchants', { body: { name: `Burst ${i}` }, headers: auth })
    : request(svc.url, 'GET', '/admin/audit-log', { headers: auth })));
  t.same([...new Set(answers.map((a) => a.status))].sort(), [200, 201], 'every request answered');
  const processes = serverProcesses(dataDir);
  const backends = processes.filter((p) => /^postgres: \S+ payments /.test(p));
  t.equal(processes.filter((p) => /io worker/.test(p)).length, 0, `no I/O worker: each backend reads for itself (${processes.join('; ')})`);
  t.notOk(processes.some((p) => /logical replication launcher/.test(p)), 'no logical replication launcher');
  // The pool's, the event store's writer and its LISTEN connection (the event feed's opens only for a stream).
  const most = EMBEDDED_POOL_MAX + 2;
  t.ok(backends.length >= 3 && backends.length <= most, `${backends.length} connections to the service's database (${backends.length} ≤ ${most})`);
});
