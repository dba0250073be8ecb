// `npm run bench` (quick, about 7 minutes on 2 cores) or `npm run bench -- --full`: every scenario
// against real PostgreSQL (127.0.0.1:5432, a fresh bench_<random> database per scenario, dropped
// after) and NATS (127.0.0.1:4222, a prefix of its own), and the embedded mode (embedded PostgreSQL
// servers of their own under the temp dir, stopped after) for append and payin-create, each side
// by side with its ceiling or peer. Writes bench/results/latest.json and
// prints a Markdown table. `--only=append,rebuild` runs some scenarios only; `--smoke` runs each
// phase for a moment (the bench's own test); `--out=FILE` writes the JSON there instead.
// BENCH_DATABASE_URL / BENCH_NATS_URL point elsewhere; BENCH_KEEP_DB=1 keeps the databases.
import fs from 'node:fs';
import path from 'node:path';
import { PROFILES } from './lib/profile.ts';
import type { ScenarioResult } from './lib/result.ts';
import { machineFacts } from './lib/machine.ts';
import { markdownTable } from './lib/table.ts';
import { ROOT } from './lib/service.ts';
import { append } from './scenarios/append.ts';
import { payinCreate } from './scenarios/payin-create.ts';
import { payinCreateMtn } from './scenarios/payin-create-mtn.ts';
import { transferE2e } from './scenarios/transfer-e2e.ts';
import { webhooks } from './scenarios/webhooks.ts';
import { rebuild } from './scenarios/rebuild.ts';
import { history } from './scenarios/history.ts';
import { hotMerchant } from './scenarios/hot-merchant.ts';
import { bulkPayouts } from './scenarios/bulk-payouts.ts';
import { asOf } from './scenarios/as-of.ts';
import { roundTrips } from './scenarios/round-trips.ts';

const args = process.argv.slice(2);
const profile = args.includes('--full') ? PROFILES.full : args.includes('--smoke') ? PROFILES.smoke : PROFILES.quick;
const only = args.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const log = (s: string) => process.stderr.write(`${s}\n`);

const scenarios: Array<[string, () => Promise<Record<string, ScenarioResult>>]> = [
  ['append', () => append(profile, log)],
  ['payin-create', () => payinCreate(profile)],
  ['payin-create-embedded', () => payinCreate(profile, { embedded: true })],
  ['payin-create-mtn', () => payinCreateMtn(profile)],
  ['transfer-e2e', () => transferE2e(profile)],
  ['webhooks', () => webhooks(profile)],
  ['rebuild', () => rebuild(profile, log)],
  ['history', () => history(profile, log)],
  ['hot-merchant', () => hotMerchant(profile)],
  ['bulk-payouts', () => bulkPayouts(profile)],
  ['as-of', () => asOf(profile, log)],
  ['round-trips', () => roundTrips(profile)],
];

const started = Date.now();
const machine = await machineFacts();
log(`bench (${profile.name}) on ${machine.cpus} CPUs, load ${machine.loadAverage1m}`);
const results: Record<string, ScenarioResult> = {};
const failures: Record<string, string> = {};
let running = 'bench';

// An error nothing awaited (a connection's, a child's) would end the run with no report at all: it
// is recorded as a failure of the scenario running when it surfaced (a leftover of an earlier one
// may surface later), and the report says what was measured before it. The run stops there: that
// scenario's clean-up does not run, as with any crash.
let reporting = false;
const crashed = (err: unknown) => {
  const stack = (err as Error)?.stack ?? String(err);
  log(`  CRASHED in ${running}: ${stack}`);
  if (reporting) process.exit(1); // the report itself failed: nothing more to write
  failures[running] = `${stack} (not awaited: surfaced while this scenario ran; the run stopped here)`;
  report();
};
process.on('uncaughtException', crashed);
process.on('unhandledRejection', crashed);

for (const [name, run] of scenarios) {
  if (only && !only.includes(name)) continue;
  const t0 = Date.now();
  running = name;
  log(`- ${name}…`);
  try {
    Object.assign(results, await run());
    log(`  done in ${Math.round((Date.now() - t0) / 1000)} s`);
  } catch (err) {
    failures[name] = (err as Error).stack ?? String(err);
    log(`  FAILED: ${(err as Error).message}`);
  }
}
report();

/** Writes the report (latest.json and the table) and exits: 1 when a scenario failed. */
function report(): never {
  reporting = true;
  const out = { profile: profile.name, at: new Date().toISOString(), durationSeconds: Math.round((Date.now() - started) / 1000), machine, scenarios: results, failures };
  const file = path.resolve(args.find((a) => a.startsWith('--out='))?.slice(6) ?? path.join(ROOT, 'bench/results/latest.json'));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\n${markdownTable(machine, profile.name, results)}\n`);
  const missed = Object.entries(results).filter(([, r]) => r.met === false);
  for (const [name, r] of missed) console.log(`target missed: ${name}: ${r.shortBy}`);
  console.log(`\n${Object.keys(results).length} figures in ${out.durationSeconds} s; results in ${file.startsWith(`${ROOT}${path.sep}`) ? path.relative(ROOT, file) : file}`);
  process.exit(Object.keys(failures).length > 0 ? 1 : 0);
}
