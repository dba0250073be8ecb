// The production entry point (README, Dockerfile, bench): `npm run build` compiles the service to
// dist/, and `bin/service` runs that build, with the allocator and compiler settings that keep the
// embedded service's memory down (bench/PROFILE.md §19). Started here on an empty data directory, as
// on a fresh machine: the embedded PostgreSQL is initialised under its data directory, the
// dashboard's static files are served from the build, and SIGTERM stops it (and its server) cleanly.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { request } from './helpers/app.ts';
import { freePort } from './helpers/net.ts';
import { stopEmbeddedPostgres } from '../infra/embedded-postgres.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Runs scripts/build.mjs with `args`; resolves with its exit code. */
const build = (...args: string[]) => new Promise<number | null>((resolve) => {
  const c = spawn(process.execPath, [path.join(root, 'scripts/build.mjs'), ...args], { cwd: root, stdio: 'ignore' });
  c.once('exit', (code) => resolve(code));
});

/**
 * A build directory of the test's own (`--out-dir`): the suite's other files run services from dist/
 * meanwhile (the bench's test among them), so these tests never change dist/ itself.
 */
function ownOutDir(t: Test): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'build-'));
  t.teardown(() => fs.rmSync(parent, { recursive: true, force: true }));
  return path.join(parent, 'dist');
}

t.test('npm run build empties its directory and compiles the service with its static files', async (t) => {
  const out = ownOutDir(t);
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'removed-module.js'), 'throw new Error("stale")\n');
  t.equal(await build('--out-dir', out), 0, 'the build exits 0');
  t.notOk(fs.existsSync(path.join(out, 'removed-module.js')), 'a module no longer in the sources is gone');
  for (const f of ['app/main.js', 'infra/embedded-postgres.js', 'dashboard/static/dashboard.css', 'dashboard/static/dashboard.js']) {
    t.ok(fs.existsSync(path.join(out, f)), f);
  }
  const app = fs.readFileSync(path.join(out, 'app/app.js'), 'utf8');
  t.match(app, /from ["']\.\.\/infra\/clock\.js["']/, 'relative imports point at the compiled .js files');
  t.notMatch(app, /from ["']\.{1,2}\/[^"']*\.ts["']/, 'none at a .ts file');
});

t.test('builds at the same time (two roles started together) all succeed and leave one complete directory', async (t) => {
  const out = ownOutDir(t);
  t.same(await Promise.all([build('--out-dir', out), build('--out-dir', out), build('--out-dir', out)]), [0, 0, 0], 'every build exits 0');
  t.ok(fs.existsSync(path.join(out, 'app/main.js')) && fs.existsSync(path.join(out, 'dashboard/static/dashboard.css')), 'the build is complete');
  t.same(fs.readdirSync(path.dirname(out)), ['dist'], 'no build directory left behind');
});

// A service of another role (or the bench's) may be loading its modules from the directory while a
// build of the same sources runs: swapping the directory, even by two renames, leaves an instant
// without it (a service failed to start on ERR_MODULE_NOT_FOUND in CI that way).
t.test('a build of unchanged sources leaves the directory in place', async (t) => {
  const out = ownOutDir(t);
  t.equal(await build('--out-dir', out), 0);
  const before = fs.statSync(out).ino;
  let missing = 0;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      if (!fs.existsSync(path.join(out, 'app/main.js'))) missing++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  const codes = await Promise.all([build('--out-dir', out), build('--out-dir', out)]);
  watching = false;
  await watch;
  t.same(codes, [0, 0], 'both builds exit 0');
  t.equal(fs.statSync(out).ino, before, 'the same directory: not replaced');
  t.equal(missing, 0, 'app/main.js was there at every look during the builds');
  fs.appendFileSync(path.join(out, 'app/main.js'), '// changed\n');
  t.equal(await build('--out-dir', out), 0);
  t.not(fs.statSync(out).ino, before, 'a directory that differs from the sources\' build is replaced');
  t.notMatch(fs.readFileSync(path.join(out, 'app/main.js'), 'utf8'), '// changed', 'by the build');
});

t.test('bin/service runs the build on an empty data directory, then stops on SIGTERM', async (t) => {
  t.equal(await build(), 0, 'npm run build (dist/ left in place when it is current)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bin-service-'));
  t.teardown(async () => {
    await stopEmbeddedPostgres(dataDir); // a service SIGKILLed by the teardown leaves its server running
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(path.join(root, 'bin/service'), ['--role', 'all'], {
    cwd: os.tmpdir(), // any working directory: the script finds the build beside itself
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), ADMIN_TOKEN: 'bin-service-admin-token', LOG_LEVEL: 'warn',
      SERVICE_NODE_OPTIONS: '--stack-trace-limit=12 --max-semi-space-size=16',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => { out += c; });
  child.stderr!.on('data', (c) => { out += c; });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });

  const until = Date.now() + 60_000;
  let ready: { status: number; body: any } | undefined;
  while (Date.now() < until && child.exitCode === null) {
    ready = await request(base, 'GET', '/readyz').catch(() => undefined);
    if (ready?.status === 200) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(ready?.status, 200, `ready (output: ${out.slice(-500)})`);
  t.equal(ready?.body.status, 'ready');
  t.ok(fs.existsSync(path.join(dataDir, 'postgres', 'data', 'PG_VERSION')), 'the embedded PostgreSQL was initialised under DATA_DIR');

  // One process (the script exec'd node): the settings are the service's own.
  const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  t.ok(cmdline.some((a) => a.endsWith('dist/app/main.js')), `runs the build: ${cmdline.join(' ')}`);
  const main = cmdline.findIndex((a) => a.endsWith('dist/app/main.js'));
  t.same(cmdline.slice(main - 2, main), ['--stack-trace-limit=12', '--max-semi-space-size=16'], 'SERVICE_NODE_OPTIONS reach node, one option per word, before the script');
  t.same(cmdline.slice(main + 1), ['--role', 'all'], "the script's arguments reach the service");
  t.notOk(cmdline.some((a) => a.includes('tsx')), 'no TypeScript loader');
  t.ok(fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0').includes('MALLOC_ARENA_MAX=1'), 'one allocator arena');

  t.equal((await request(base, 'GET', '/dashboard/static/dashboard.css')).status, 200, 'static files from the build');
  t.equal((await request(base, 'GET', '/openapi.json')).status, 200);
  t.equal((await request(base, 'GET', '/payins')).status, 401, 'the API itself answers');

  child.kill('SIGTERM');
  t.equal(await exit, 0, 'exits 0 on SIGTERM');
  t.notOk(fs.existsSync(path.join(dataDir, 'postgres', 'data', 'postmaster.pid')), 'and its PostgreSQL stopped with it');
});
