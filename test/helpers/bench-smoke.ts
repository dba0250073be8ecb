// `npm run bench --smoke --only=<scenarios>` against the real services, as the bench's own tests run
// it (bench.report, payouts.bulk.bench): its stdout and its report (latest.json's content).
import type { Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '..', '..');

/** Set when the real PostgreSQL and NATS are given: the bench runs against them only. */
export const benchServices = !!(process.env.DATABASE_URL && process.env.NATS_URL);

export async function smokeRun(t: Test, only: string): Promise<{ stdout: string; report: any }> {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-')), 'latest.json');
  t.teardown(() => fs.rmSync(path.dirname(out), { recursive: true, force: true }));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', `--only=${only}`, `--out=${out}`], {
    cwd: root,
    env: { ...process.env, BENCH_DATABASE_URL: process.env.DATABASE_URL, BENCH_NATS_URL: process.env.NATS_URL },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  // 'close', not 'exit': the last lines of its stderr (the reason it failed) are read by then.
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));
  // A failed run's reason goes in the assertion's own line: CI prints a failure's first lines only.
  const why = () => `${signal ?? `code ${code}`}; its stderr ends: ${lastLines(stderr, 12)}`;
  t.equal(code, 0, code === 0 ? 'the run exits 0' : `the run exits 0 (it ended with ${why()})`);
  if (!fs.existsSync(out)) throw new Error(`the run wrote no report (${why()})`);
  return { stdout, report: JSON.parse(fs.readFileSync(out, 'utf8')) };
}

/** The last `n` non-empty lines of `text`, on one line. */
function lastLines(text: string, n: number): string {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).slice(-n).join(' | ').slice(-3000) || '(nothing)';
}
