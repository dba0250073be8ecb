// Which test files run where. A file's tier is in its name: `*.unit.test.ts` (pure: no database, no
// bus), `*.int.test.ts` (one adapter or component on a real database or bus), `*.e2e.test.ts` (the
// service over HTTP, in-process or as child processes).
//
// - `npm test` (the embedded lane): every file but the CI-only ones, once, on the test run's own
//   embedded PostgreSQL and the in-process bus.
// - `npm run test:services` (CI's second lane, DATABASE_URL and NATS_URL set): the adapters' contract
//   suites on the external PostgreSQL, NATS and KurrentDB (skipped visibly without EVENTSTORE_URL),
//   the suites about several processes on those services, and the CI-only suites.
// - CI-only: the reliability suites in their normal profile (crash consistency on both backends,
//   hostile input, the browser; `npm run soak` runs the first two in their long profiles), and the
//   suites that measure the machine rather than the code's logic (the heap factor, three compiles of
//   the whole service): a minute and a half of both cores that a developer's run need not pay.

export const CI_ONLY = [
  'test/crash.consistency.e2e.test.ts',
  'test/hostile.input.e2e.test.ts',
  'test/dashboard.browser.e2e.test.ts',
  'test/pay.browser.e2e.test.ts',
  'test/dashboard.team.browser.e2e.test.ts',
  'test/dashboard.two-factor.browser.e2e.test.ts',
  'test/heap-growth.int.test.ts',
  'test/service.build.e2e.test.ts',
];

export const SERVICES = [
  'test/eventstore.postgres.int.test.ts',
  'test/eventstore.postgres.restart.int.test.ts',
  'test/eventstore.kurrent.int.test.ts',
  'test/bus.nats.e2e.test.ts',
  'test/event-forwarder.nats.e2e.test.ts',
  'test/bus.duplicates.e2e.test.ts',
  'test/roles.multiprocess.e2e.test.ts',
  'test/races.crossprocess.e2e.test.ts',
  // The event feed streamed by an API-only process and resumed across processes, on the external PostgreSQL and NATS too.
  'test/event-feed.two-processes.e2e.test.ts',
  'test/refunds.races.e2e.test.ts',
  'test/bench.report.e2e.test.ts',
  // Webhook endpoints: fan-out, filters, secrets, staged rotation, 410, isolation, on the external PostgreSQL and NATS too.
  'test/webhook-endpoints.e2e.test.ts',
  // Bulk payouts racing single payouts on one wallet, replays and ids stable across a retry, on the external PostgreSQL and NATS too.
  'test/payouts.bulk.e2e.test.ts',
  // The bulk-payouts bench scenario smoke-run against the real services (skipped without them).
  'test/payouts.bulk.bench.e2e.test.ts',
  // Operator availability enforced through a second process's cache, on the external PostgreSQL and NATS too.
  'test/operators.availability.e2e.test.ts',
  // Statements chain with payments racing their boundaries, on the external PostgreSQL and NATS too.
  'test/statements.merchant.e2e.test.ts',
];
