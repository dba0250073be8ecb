// The bench's report (issue 8): each figure judged against its target with its ratio to the ceiling
// run beside it, by how much a missed target is missed, the Markdown table with the machine's facts,
// and `npm run bench` itself writing bench/results/latest.json's shape. The run uses the smoke
// profile (every phase for a moment): it checks that the bench runs and reports, not its figures.
import t from 'tap';
import os from 'node:os';
import { judge } from '../bench/lib/result.ts';
import { benchServices, smokeRun } from './helpers/bench-smoke.ts';
import { markdownTable } from '../bench/lib/table.ts';
import type { Machine } from '../bench/lib/machine.ts';
import { natsServerCpuClock, serverCpuClock } from '../bench/lib/embedded.ts';
import { NATS_URL } from '../bench/lib/service.ts';
import { BASE_URL } from '../bench/lib/database.ts';

// The smoke runs below take minutes together (each subtest has its own bound): the file's bound is theirs.
t.setTimeout(900_000);

t.test('a figure with a ceiling: the ratio rounded to three places, the target judged on it', async (t) => {
  const met = judge({ value: 2_000, unit: 'creates/s', ceiling: 3_000, ceilingName: 'Express', target: { on: 'ratio', op: '>=', bound: 0.5 } });
  t.equal(met.ratio, 0.667);
  t.equal(met.met, true);
  t.equal(met.target, 'ratio >= 0.5');
  t.notOk('shortBy' in met, 'nothing missed, nothing to say');

  const missed = judge({ value: 1_200, unit: 'creates/s', ceiling: 4_000, ceilingName: 'Express', target: { on: 'ratio', op: '>=', bound: 0.5 } });
  t.equal(missed.ratio, 0.3);
  t.equal(missed.met, false);
  t.equal(missed.shortBy, 'ratio 0.3 vs >= 0.5: 40% below the target', 'by how much, in words');
});

t.test('a figure judged on its value: above a ceiling (<=) or below a floor (>=)', async (t) => {
  const p99 = judge({ value: 182, unit: 'ms', ceiling: 77, ceilingName: 'Express (p99)', target: { on: 'value', op: '<=', bound: 100 } });
  t.equal(p99.met, false);
  t.equal(p99.shortBy, '182 ms vs <= 100: 82% above the target');
  t.equal(p99.ratio, 2.364, 'the ratio is still reported beside it');

  const rebuild = judge({ value: 23_147.7, unit: 'events/s', target: { on: 'value', op: '>=', bound: 50_000 } });
  t.equal(rebuild.met, false);
  t.equal(rebuild.shortBy, '23147.7 events/s vs >= 50000: 54% below the target');
  t.equal(rebuild.ceiling, null);
  t.equal(rebuild.ratio, null);

  t.equal(judge({ value: 163, unit: 'MB peak RSS', target: { on: 'value', op: '<=', bound: 300 } }).met, true);
  t.equal(judge({ value: 100, unit: 'ms', target: { on: 'value', op: '<=', bound: 100 } }).met, true, 'the bound itself meets the target');
});

t.test('a ratio target without a ceiling is not judged; a figure without a target is reported only', async (t) => {
  const noCeiling = judge({ value: 10, unit: 'events/s', ceiling: 0, target: { on: 'ratio', op: '>=', bound: 2 } });
  t.equal(noCeiling.ratio, null);
  t.equal(noCeiling.met, null);
  const reported = judge({ value: 804.4, unit: 'events/s', ceiling: 3_101.3, ceilingName: 'pgbench' });
  t.equal(reported.target, null);
  t.equal(reported.met, null);
  t.equal(reported.ratio, 0.259);
});

t.test('the Markdown table: machine facts, one row per figure, a miss with its margin', async (t) => {
  const machine: Machine = { cpus: 2, cpuModel: 'AMD EPYC', memoryGb: 24, loadAverage1m: 1.1, node: 'v20.20.2', postgres: 'PostgreSQL 15.20 (Debian) on x86_64-pc-linux-gnu, compiled by gcc', nats: '2.9.10' };
  const table = markdownTable(machine, 'quick', {
    'payin-create': judge({ value: 621.3, unit: 'creates/s', ceiling: 1_530.1, ceilingName: 'Express 5 + one pg INSERT', target: { on: 'ratio', op: '>=', bound: 0.5 } }),
    memory: judge({ value: 162.9, unit: 'MB peak RSS', target: { on: 'value', op: '<=', bound: 300 } }),
  });
  const lines = table.split('\n');
  t.equal(lines[0], 'Machine: 2 × AMD EPYC, 24 GB, load 1.1 at start; Node v20.20.2; PostgreSQL 15.20 (Debian); NATS 2.9.10. Profile: quick.');
  t.equal(lines[2], '| scenario | value | ceiling / peer | ratio | target | met |');
  t.equal(lines[4], '| payin-create | 621.3 creates/s | 1,530.1 (Express 5 + one pg INSERT) | 0.406 | ratio >= 0.5 | **no**: ratio 0.406 vs >= 0.5: 19% below the target |');
  t.equal(lines[5], '| memory | 162.9 MB peak RSS | – | – | value <= 300 | yes |');
  t.equal(lines.length, 6);
});

const services = benchServices;

t.test('npm run bench (smoke profile): latest.json\'s shape, every figure with its ratio, the table printed', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 240_000,
}, async (t) => {
  const { stdout, report } = await smokeRun(t, 'append,payin-create');
  t.equal(report.profile, 'smoke');
  t.same(report.failures, {}, 'no scenario failed');
  t.equal(report.machine.cpus, os.cpus().length);
  t.equal(report.machine.node, process.version);
  t.match(report.machine.postgres, /^PostgreSQL \d+/);
  t.type(report.machine.nats, 'string', 'NATS answered with its version');

  const names = Object.keys(report.scenarios);
  for (const name of ['append pg 16w distinct vs emmett', 'append pg 16w hot vs emmett', 'append embedded 16w distinct', 'payin-create', 'payin-create p50', 'payin-create p99', 'payin-create CPU per pair', 'payin-create drain', 'payin-create settled', 'memory']) {
    t.ok(names.includes(name), `${name} reported`);
  }
  for (const [name, r] of Object.entries<Record<string, unknown>>(report.scenarios)) {
    for (const key of ['value', 'unit', 'ceiling', 'ratio', 'target', 'met']) t.ok(key in r, `${name}: ${key}`);
    t.ok(typeof r.value === 'number' && r.value > 0, `${name}: a measured value`);
    if (typeof r.ceiling === 'number' && r.ceiling > 0) {
      t.equal(r.ratio, Math.round((r.value as number) / r.ceiling * 1000) / 1000, `${name}: ratio = value / ceiling`);
    }
    if (r.met === false) {
      t.match(r.shortBy, /% (below|above) the target$/, `${name}: by how much it is missed`);
      t.match(stdout, `target missed: ${name}: ${r.shortBy}`, `${name}: the miss printed`);
    }
  }
  t.equal(report.scenarios['payin-create'].ceilingName, 'Express 5 + one pg INSERT');
  t.equal(report.scenarios['append pg 16w distinct vs emmett'].ceilingName, 'Emmett PostgreSQL event store (peer)');
  t.match(report.scenarios.memory.unit, 'MB peak RSS');
  t.match(report.scenarios['payin-create CPU per pair'], { unit: 'ms of service CPU per quote + payin pair', target: 'value <= 2.07' }, 'issue 44: the CPU per create, with its target');
  // The machine's CPU per create on both sides (bench/PROFILE.md §33), PostgreSQL's and NATS's where
  // their servers run on this machine (null elsewhere).
  const details = report.scenarios['payin-create'].details;
  const local = (await serverCpuClock(BASE_URL)) !== undefined;
  if (local) t.ok(details.postgresCpuMsPerPair > 0, `PostgreSQL's CPU per pair (${details.postgresCpuMsPerPair} ms)`);
  else t.equal(details.postgresCpuMsPerPair, null, 'a server elsewhere: no figure');
  // The CPU per pair counts every payin's work until it settled (bench/PROFILE.md §34): none left.
  t.equal(details.drain.pendingAtLimit, 0, 'every payin of the load settled before the CPU was read');
  const drained = report.scenarios['payin-create drain'];
  t.match(drained, { unit: 's after the load until every payin settled', details: { pendingAtLimit: 0 } }, 'how far the background fell behind, reported');
  // The whole work's pace, which a change cannot raise by deferring the legs' starts: the load's
  // payins over the load and its drain (the smoke profile's load lasts 1 s).
  const settled = report.scenarios['payin-create settled'];
  t.equal(settled.unit, 'payins settled/s over the load and its drain');
  t.ok(Math.abs(settled.value - drained.details.payinsOfTheLoad / (1 + drained.value)) < 0.6, // payinsOfTheLoad is rounded
    `payins settled/s (${settled.value}) = the load's payins over its second and the drain`);
  t.ok(details.ceilingCpuMsPerCreate.processMsPerCreate > 0, `the ceiling process's CPU per create (${details.ceilingCpuMsPerCreate.processMsPerCreate} ms)`);
  if (local) t.ok(details.ceilingCpuMsPerCreate.postgresMsPerCreate > 0, `the ceiling's PostgreSQL CPU per create (${details.ceilingCpuMsPerCreate.postgresMsPerCreate} ms)`);
  if (natsServerCpuClock(NATS_URL)) t.ok(details.natsCpuMsPerPair > 0, `the NATS server's CPU per pair (${details.natsCpuMsPerPair} ms)`);
  else t.equal(details.natsCpuMsPerPair, null, 'a NATS server elsewhere: no figure');

  t.match(stdout, /^Machine: \d+ × .+; Node v\d+.+; PostgreSQL \d+.+; NATS .+\. Profile: smoke\.$/m, 'the machine facts');
  t.match(stdout, '| scenario | value | ceiling / peer | ratio | target | met |', 'the table');
  for (const name of names) t.match(stdout, `| ${name} | `, `${name}: a row`);
});

t.test('the history and hot-merchant scenarios (smoke profile): each figure measured against the same run\'s fresh merchant, with its target', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 300_000,
}, async (t) => {
  const { report } = await smokeRun(t, 'history,hot-merchant');
  t.same(report.failures, {}, 'no scenario failed');
  for (const name of ['history first payout', 'history RSS', 'history rebuild', 'history audit', 'hot-merchant']) {
    const r = report.scenarios[name];
    t.ok(r, `${name} reported`);
    t.ok(typeof r?.value === 'number' && r.value > 0 && typeof r.ceiling === 'number' && r.ceiling > 0, `${name}: measured beside its comparison`);
    t.ok(r?.target, `${name}: judged against a target`);
  }
});


t.test('the payin-create-mtn scenario (smoke profile): payins through the MTN adapter against the sandbox path of the same run, each payin sent to MTN once', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 240_000,
}, async (t) => {
  const { report } = await smokeRun(t, 'payin-create-mtn');
  t.same(report.failures, {}, 'no scenario failed (every payin of the MTN run reached MTN once and completed)');
  const creates = report.scenarios['payin-create-mtn'];
  t.equal(creates?.unit, 'creates/s');
  t.ok(creates?.value > 0 && creates?.ceiling > 0, 'measured beside the sandbox path');
  t.equal(creates?.ceilingName, 'the sandbox path, same run');
  t.equal(creates?.target, 'ratio >= 0.8');
  t.equal(report.scenarios['payin-create-mtn p99']?.target, 'value <= 100');
  const mtn = creates?.details?.reachedMtn;
  t.ok(mtn?.payins > 0, 'payins were created through MTN');
  t.equal(mtn?.requestToPays, mtn?.payins, 'one request-to-pay per payin');
  t.same([mtn?.neverSent, mtn?.sentTwice, mtn?.unknownReferences], [0, 0, 0]);
});

t.test('the as-of scenario (smoke profile): p50 and p99 of GET /wallets?as_of= on a long wallet, judged against 50 ms', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 300_000,
}, async (t) => {
  const { report } = await smokeRun(t, 'as-of');
  t.same(report.failures, {}, 'no scenario failed (each sampled answer is the sum of the movements before its instant)');
  for (const name of ['as-of p50', 'as-of p99']) {
    const r = report.scenarios[name];
    t.ok(typeof r?.value === 'number' && r.value > 0, `${name}: measured`);
    t.equal(r?.target, 'value <= 50', `${name}: judged against 50 ms`);
    t.equal(r?.details?.answersChecked, true, `${name}: the answers were checked`);
  }
});

t.test('the round-trips scenario (smoke profile): statements and commits per pair, per payin settled and per transfer, counted from the server\'s log', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 300_000,
}, async (t) => {
  const { report } = await smokeRun(t, 'round-trips');
  t.same(report.failures, {}, 'no scenario failed (every pair whole, every payin settled, every transfer completed)');
  const pair = report.scenarios['round-trips pair'];
  t.equal(pair?.target, 'value <= 6');
  // No floor per pair but zero: concurrent requests share statements (group-committed appends,
  // batched reads), and the value is the raw count less an estimate of the pollers' share (the idle
  // rate times the work's length), which lands lower when they sent less under load than idle (1.7
  // to 2.6 measured, 1.9 in a CI run that asserted 2). Counted, and far more is a count gone wrong.
  t.ok(pair?.details?.rawStatements > 0, `statements in the raw count (${pair?.details?.rawStatements} per pair)`);
  t.ok(pair?.value > 0 && pair?.value < 30, `statements per pair counted (${pair?.value})`);
  t.ok(pair?.details?.commits > 0 && pair?.details?.rawStatements >= pair?.value, 'commits, and the raw count before the pollers are taken out');
  t.ok(Array.isArray(pair?.details?.top) && pair.details.top.length > 0, 'the statements sent most');
  t.ok(report.scenarios['round-trips transfer']?.value > 0, 'statements per transfer counted');
  t.ok(typeof report.scenarios['round-trips payin settled']?.value === 'number', 'statements per payin settled counted');
});
