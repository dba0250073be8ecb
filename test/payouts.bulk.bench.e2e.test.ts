// The bulk-payouts bench scenario (bench/scenarios/bulk-payouts.ts) smoke-run as `npm run bench`
// runs it (`--smoke --only=bulk-payouts`, against the real PostgreSQL and NATS, as
// test/bench.report.e2e.test.ts does for the other scenarios; a file of its own for the file time
// budget): one batch of 100 measured beside 100 single payouts in the same run, judged against
// its 3× target. Its figures measure nothing (smoke profile).
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '..');
const services = process.env.DATABASE_URL && process.env.NATS_URL;

t.test('bulk-payouts (smoke profile): one batch of 100 beside 100 single payouts, judged against its 3× target', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 110_000,
}, async (t) => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-bulk-')), 'latest.json');
  t.teardown(() => fs.rmSync(path.dirname(out), { recursive: true, force: true }));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--only=bulk-payouts', `--out=${out}`], {
    cwd: root,
    env: { ...process.env, BENCH_DATABASE_URL: process.env.DATABASE_URL, BENCH_NATS_URL: process.env.NATS_URL },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, 'the run exits 0', { stderr: stderr.slice(-2000) });
  const report = JSON.parse(fs.readFileSync(out, 'utf8'));
  t.same(report.failures, {}, 'no scenario failed');
  const r = report.scenarios['bulk-payouts'];
  t.ok(typeof r?.value === 'number' && r.value > 0 && typeof r.ceiling === 'number' && r.ceiling > 0, 'measured beside the single payouts');
  t.equal(r?.ratio, Math.round((r.value / r.ceiling) * 1000) / 1000, 'the ratio of the two');
  t.equal(r?.target, 'ratio >= 3', 'judged against its target');
  t.equal(typeof r?.met, 'boolean');
  t.match(r?.details, { itemsPerBatch: 100, batch: { payouts: 100 }, single: { payouts: 100 } }, 'the same number of payouts in both phases');
  t.match(stdout, '| bulk-payouts | ', 'a row of the printed table');
});
