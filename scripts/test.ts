// `npm test [-- files…]` (`npm run test:services` for CI's second lane, test/lanes.ts): runs the
// suite with tap and prints what a reader needs: one line per test
// file as it finishes, the failures with their first lines, and one closing summary line
// ("N passed, N failed, N skipped in 4m12s", counting assertions) that CI reads. The whole TAP
// stream is kept in .tap/last-run.tap for the details. Ctrl-C stops the run and says it was
// interrupted and what had finished, not a "not ok" for every file that never ran.
//
// Without DATABASE_URL the run has an embedded PostgreSQL of its own (test/helpers/db.ts) in a
// temporary directory, stopped and removed when the run ends, however it ends.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { stopEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { CI_ONLY, SERVICES } from '../test/lanes.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tapBin = path.join(path.dirname(createRequire(import.meta.url).resolve('tap/package.json')), 'dist/esm/run.mjs');
fs.mkdirSync(path.join(root, '.tap'), { recursive: true });
const keep = fs.createWriteStream(path.join(root, '.tap/last-run.tap'));
const started = Date.now();
/** The files: those named, else the lane's (test/lanes.ts): `--lane=services`, or the embedded lane. */
function filesToRun(argv: string[]): { files: string[]; env: Record<string, string>; tapArgs: string[] } {
  const lane = argv.find((a) => a.startsWith('--lane='))?.slice('--lane='.length);
  const named = argv.filter((a) => !a.startsWith('--lane='));
  if (named.length > 0) return { files: named, env: {}, tapArgs: [] };
  // The crash suite runs its embedded run too in this lane (it runs the PostgreSQL one when DATABASE_URL is set).
  // Three at a time there (package.json's four is for the embedded lane): its crash, browser and
  // multi-process suites each keep several processes busy.
  if (lane === 'services') return { files: [...SERVICES, ...CI_ONLY], env: { CRASH_BOTH: '1' }, tapArgs: ['--jobs=3'] };
  const all = fs.readdirSync(path.join(root, 'test')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`).sort();
  return { files: all.filter((f) => !CI_ONLY.includes(f)), env: {}, tapArgs: [] };
}
const run = filesToRun(process.argv.slice(2));

/**
 * tap builds itself for its plugin set (package.json: only the plugins the tests use, its TypeScript
 * plugin off and test/helpers/ts-loader.mjs loading the files instead); a run that finds its build
 * stale rebuilds it but still starts its own test files with the stale loaders (ts-node: twice as
 * slow on a fresh clone). So build first, once per set.
 */
function ensureTapBuilt(): void {
  const config = JSON.stringify({ tap: JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).tap, version: createRequire(import.meta.url)('tap/package.json').version });
  // Kept in node_modules: `npm ci` replaces tap's build with its default, and this marker with it.
  const marker = path.join(root, 'node_modules', '.cache', 'mpa-tap-built-for.json');
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === config) return;
  const built = spawnSync(process.execPath, [tapBin, 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) throw new Error(`tap build failed (${built.status ?? built.signal})`);
  fs.mkdirSync(path.dirname(marker), { recursive: true });
  fs.writeFileSync(marker, config);
}
ensureTapBuilt();

const serverDir = process.env.DATABASE_URL ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-test-run-'));
if (serverDir) fs.chmodSync(serverDir, 0o755); // the server's user must reach its data (as root: postgres)
const child = spawn(process.execPath, [tapBin, '--reporter=tap', ...run.tapArgs, ...run.files], {
  cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...run.env, ...(serverDir ? { MPA_TEST_PG_DIR: serverDir } : {}) },
});

const files: { passed: number; failed: Array<{ file: string; lines: string[] }>; skipped: number; stopped: number } = { passed: 0, failed: [], skipped: 0, stopped: 0 };
const totals: Record<string, number> = { pass: 0, fail: 0, skip: 0, todo: 0 };
/** Each finished file's time (ms), for the closing line that names the slowest. */
const times = new Map<string, number>();
let interrupted = false;
let pending = '';
/** The lines of the file being read at the top level (for a failure's first lines). */
let current: string[] = [];

const duration = (ms: number) => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

function onLine(line: string): void {
  // A top-level result: "ok 3 - test/x.test.ts # time=…" (files are the top level).
  const top = /^(not ok|ok) \d+ - (\S+)(?: # (.*))?$/.exec(line);
  if (top) {
    const [, status, file = '', directive = ''] = top;
    const time = /time=([0-9.]+)ms/.exec(directive);
    if (interrupted && status === 'not ok') {
      // Ended by the interruption (tap reports every file it stopped or never started as failed).
      files.stopped++;
      current = [];
      return;
    }
    if (/^SKIP/i.test(directive)) files.skipped++;
    else if (status === 'ok') files.passed++;
    else files.failed.push({ file, lines: current.filter((l) => /not ok|^\s+(found|wanted|message|at):/.test(l)).slice(0, 12) });
    if (time) times.set(file, Number(time[1]));
    process.stdout.write(`${status === 'ok' ? 'ok    ' : 'FAILED'} ${file}${time ? ` (${(Number(time[1]) / 1000).toFixed(1)}s)` : ''}\n`);
    current = [];
    return;
  }
  current.push(line);
  if (current.length > 4000) current.splice(0, current.length - 4000);
  // tap's closing line: "# { total: 12, pass: 10, fail: 1, skip: 1 }"
  const sum = /^# \{ total: \d+(.*)\}$/.exec(line);
  if (sum) for (const k of Object.keys(totals)) totals[k] = Number(new RegExp(`${k}: (\\d+)`).exec(sum[1] ?? '')?.[1] ?? 0);
}

child.stdout.on('data', (chunk: Buffer) => {
  keep.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const l of lines) onLine(l);
});
child.stderr.on('data', (chunk: Buffer) => { keep.write(chunk); process.stderr.write(chunk); });

process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  child.kill('SIGINT');
});

child.on('close', async (code) => {
  keep.end();
  if (serverDir) {
    await stopEmbeddedPostgres(serverDir).catch(() => undefined);
    fs.rmSync(serverDir, { recursive: true, force: true });
  }
  if (pending) onLine(pending);
  if (files.failed.length > 0) {
    process.stdout.write('\nFailures:\n');
    for (const f of files.failed) process.stdout.write(`  ${f.file}\n${f.lines.map((l) => `    ${l.trim()}`).join('\n')}\n`);
    process.stdout.write('  (the whole output: .tap/last-run.tap)\n');
  }
  const fileLine = `files: ${files.passed} passed, ${files.failed.length} failed${files.skipped ? `, ${files.skipped} skipped` : ''}`;
  if (interrupted) {
    process.stdout.write(`\nINTERRUPTED after ${duration(Date.now() - started)}: ${fileLine}; ${files.stopped} stopped or never started (not failures)\n`);
    process.exit(130);
  }
  const slowest = [...times].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([f, ms]) => `${f.replace(/^test\//, '')} ${duration(ms)}`);
  if (slowest.length > 1) process.stdout.write(`\nslowest: ${slowest.join(', ')}`);
  process.stdout.write(`\n${fileLine}\n${totals.pass} passed, ${totals.fail} failed, ${totals.skip} skipped in ${duration(Date.now() - started)}\n`);
  process.exit(code ?? 1);
});
