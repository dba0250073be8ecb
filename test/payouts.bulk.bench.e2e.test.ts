// The bulk-payouts bench scenario (bench/scenarios/bulk-payouts.ts) smoke-run as `npm run bench`
// runs it (`--smoke --only=bulk-payouts`, against the real PostgreSQL and NATS, as
// test/bench.report.e2e.test.ts does for the other scenarios; a file of its own for the file time
// budget): one batch of 100 measured beside 100 single payouts in the same run, judged against
// its 3× target. Its figures measure nothing (smoke profile).
import t from 'tap';
import { benchServices as services, smokeRun } from './helpers/bench-smoke.ts';

t.test('bulk-payouts (smoke profile): one batch of 100 beside 100 single payouts, judged against its 3× target', {
  skip: services ? false : 'needs PostgreSQL and NATS (DATABASE_URL and NATS_URL): the bench runs against the real services',
  timeout: 110_000,
}, async (t) => {
  const { stdout, report } = await smokeRun(t, 'bulk-payouts');
  t.same(report.failures, {}, 'no scenario failed');
  const r = report.scenarios['bulk-payouts'];
  t.ok(typeof r?.value === 'number' && r.value > 0 && typeof r.ceiling === 'number' && r.ceiling > 0, 'measured beside the single payouts');
  t.equal(r?.ratio, Math.round((r.value / r.ceiling) * 1000) / 1000, 'the ratio of the two');
  t.equal(r?.target, 'ratio >= 3', 'judged against its target');
  t.equal(typeof r?.met, 'boolean');
  t.match(r?.details, { itemsPerBatch: 100, batch: { payouts: 100 }, single: { payouts: 100 } }, 'the same number of payouts in both phases');
  t.match(stdout, '| bulk-payouts | ', 'a row of the printed table');
});
