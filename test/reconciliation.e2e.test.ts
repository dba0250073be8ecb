// Reconciliation (CONTRACT §15, issue 41 point 6): GET /admin/reconciliation and `npm run reconcile`
// compare every provider leg of a period with its provider's status. The sandbox's books are the
// `sandbox_provider_legs` table: a settled leg whose row is changed disagrees, one whose row is
// deleted was never seen, a stuck leg (phone ending 98) is pending too long once older than
// PROVIDER_PENDING_ALERT_SECONDS. Against the MTN simulator: MTN saying FAILED for a leg we completed
// disagrees, a leg MTN does not know was never seen, MTN down is unreachable.
import t from 'tap';
import { startTestApp, request, type MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, sleep, topUp, until } from './helpers/money.ts';
import { recording, responseChecker, type Recorded } from './helpers/openapi-responses.ts';
import { cli } from './helpers/finance.ts';
import { startMtnMomoSimulator } from './simulators/mtn-momo.ts';
import { providers } from '../infra/providers/index.ts';
import { PeriodTooLarge, reconcile, type ReconciliationDeps } from '../commands/reconciliation.ts';

const collection = { subscriptionKey: 'col-sub-key', apiUser: 'a1b2c3d4-0000-4000-8000-000000000001', apiKey: 'col-api-key' };
const disbursement = { subscriptionKey: 'dis-sub-key', apiUser: 'a1b2c3d4-0000-4000-8000-000000000002', apiKey: 'dis-api-key' };
const mtn = await startMtnMomoSimulator({ collection, disbursement, targetEnvironment: 'sandbox', currency: 'EUR' });
const app = await startTestApp({ env: {
  PROVIDER_PENDING_ALERT_SECONDS: '3', PROVIDER_FIRST_CHECK_MS: '100', PROVIDER_TIMEOUT_MS: '1000',
  MTN_MOMO_BASE_URL: mtn.url, MTN_MOMO_TARGET_ENVIRONMENT: 'sandbox', MTN_MOMO_CURRENCY: 'EUR',
  MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: collection.subscriptionKey, MTN_MOMO_COLLECTION_API_USER: collection.apiUser, MTN_MOMO_COLLECTION_API_KEY: collection.apiKey,
  MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY: disbursement.subscriptionKey, MTN_MOMO_DISBURSEMENT_API_USER: disbursement.apiUser,
  MTN_MOMO_DISBURSEMENT_API_KEY: disbursement.apiKey,
} });
t.teardown(async () => {
  await app.stop();
  await mtn.down();
});
const s = app.app.services;
const seen: Recorded[] = [];
const h = recording(app, seen);
const started = new Date(Date.now() - 1000).toISOString();

const m = await h.newMerchant('Reconciled');
await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'] });
await topUp(h, m, 'XOF', '100000');
const payer = await newCustomer(h, m, 'CM', '+237670000001');

async function payin(phone: string, wait = true): Promise<string> {
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: payer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  if (wait) await settled(h, m, 'payins', p.body.id);
  return p.body.id as string;
}

async function payout(phone: string): Promise<string> {
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '2000'));
  const r = await h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: payer, payment_reason_text: 'Invoice 7',
    recipient: { ...party('SN', 'SN_WAVE_MOMO', phone), recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' },
  }, { idem: true });
  if (r.status !== 201) throw new Error(`payout: ${r.status} ${r.text}`);
  await settled(h, m, 'payouts', r.body.id);
  return r.body.id as string;
}

async function transfer(): Promise<string> {
  const q = await h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000',
  }, { idem: true });
  if (q.status !== 201) throw new Error(`transfer quote: ${q.status} ${q.text}`);
  const r = await h.as(m, 'POST', '/transfers', {
    quote_id: q.body.id, customer_id: payer, payer: party('CM', 'CM_MTN_MOMO', '+237670000001'),
    recipient: { ...party('SN', 'SN_WAVE_MOMO', '+221770000001'), recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye' },
  }, { idem: true });
  if (r.status !== 201) throw new Error(`transfer: ${r.status} ${r.text}`);
  await until(`transfer ${r.body.id} completed`, async () => (await h.as(m, 'GET', `/transfers/${r.body.id}`)).body.status === 'completed');
  return r.body.id as string;
}

const reconciliation = (query: string) => h.admin('GET', `/admin/reconciliation?${query}`);
const sandboxPeriod = () => `provider=sandbox&from=${encodeURIComponent(started)}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`;
const byReference = (findings: Array<{ reference: string }>) => Object.fromEntries(findings.map((f) => [f.reference, f]));

/** `npm run reconcile` as a child process on this app's database. */
const runReconcile = (args: string[], env: Record<string, string> = {}) =>
  cli('reconcile', args, { DATABASE_URL: s.config.databaseUrl!, DATA_DIR: app.dataDir, PROVIDER_PENDING_ALERT_SECONDS: '3', ...env });

// The sandbox's legs of this file: every owner, two agreeing failures and completions, then the three findings made.
const ids = {} as Record<'completed' | 'failed' | 'payout' | 'transfer' | 'refund' | 'disagrees' | 'notSeen' | 'stuck', string>;

t.test('the sandbox: every leg agrees, a young stuck leg too', async (t) => {
  ids.completed = await payin('+237670000001');
  ids.failed = await payin('+237670000099');
  ids.payout = await payout('+221770000002');
  ids.transfer = await transfer();
  const r = await h.as(m, 'POST', '/refunds', { payin_id: ids.completed, amount: '1000' }, { idem: true });
  t.equal(r.status, 201, r.text);
  ids.refund = r.body.id;
  await until(`refund ${ids.refund} completed`, async () => (await h.as(m, 'GET', `/refunds/${ids.refund}`)).body.status === 'completed');
  ids.disagrees = await payin('+237670000002');
  ids.notSeen = await payin('+237670000003');
  ids.stuck = await payin('+237670000098', false);
  await until('the stuck leg started', async () => (await s.knex('provider_legs').where({ reference: ids.stuck }).first()) !== undefined);

  const res = await reconciliation(sandboxPeriod());
  t.equal(res.status, 200, res.text);
  // payins 5, payout 1, transfer 2 (collection, disbursement), refund 1.
  t.match(res.body, { provider: 'sandbox', pending_alert_seconds: 3, checked: 9, agreeing: 9, findings: [] });
  t.same(res.body.counts, { disagrees: 0, not_seen: 0, pending_too_long: 0, unreachable: 0 });
  const owners = await s.knex('provider_legs').where('created_at', '>=', started).andWhere({ provider: 'sandbox' }).select('owner', 'kind');
  t.same(owners.map((o: any) => `${o.owner}/${o.kind}`).sort(), [
    ...Array(5).fill('payin/collection'), 'payout/disbursement', 'refund/refund', 'transfer/collection', 'transfer/disbursement',
  ].sort(), 'every kind of owner was checked');
});

t.test('the sandbox: a disagreement, a leg never seen, a leg pending too long', async (t) => {
  await s.knex('sandbox_provider_legs').where({ reference: ids.disagrees }).update({ state: 'failed', reason: 'INSUFFICIENT_FUNDS' });
  await s.knex('sandbox_provider_legs').where({ reference: ids.notSeen }).delete();
  await sleep(3100); // past PROVIDER_PENDING_ALERT_SECONDS
  const res = await reconciliation(sandboxPeriod());
  t.equal(res.status, 200, res.text);
  t.match(res.body, { checked: 9, agreeing: 6, counts: { disagrees: 1, not_seen: 1, pending_too_long: 1, unreachable: 0 } });
  t.equal(res.body.findings.length, 3);
  const f = byReference(res.body.findings);
  t.match(f[ids.disagrees], {
    owner: 'payin', kind: 'collection', provider: 'sandbox', provider_reference: /^SBX-/, ours: 'completed', theirs: 'failed',
    finding: 'disagrees', detail: 'INSUFFICIENT_FUNDS', created_at: String,
  });
  t.match(f[ids.notSeen], { owner: 'payin', ours: 'completed', theirs: null, finding: 'not_seen', detail: null, provider_reference: /^SBX-/ });
  t.match(f[ids.stuck], { owner: 'payin', ours: 'pending', theirs: 'pending', finding: 'pending_too_long', detail: null });
  const times = res.body.findings.map((x: { created_at: string }) => x.created_at);
  t.same(times, [...times].sort(), 'in leg order');
  t.same(Object.keys(res.body.findings[0]).sort(),
    ['reference', 'owner', 'kind', 'provider', 'provider_reference', 'ours', 'theirs', 'finding', 'detail', 'created_at'].sort());

  const all = await reconciliation(`from=${encodeURIComponent(started)}`);
  t.equal(all.body.provider, null, 'every provider by default');
  t.equal(all.body.findings.length, 3, 'the MTN legs (none yet) add nothing');
  const before = await reconciliation(`provider=sandbox&from=2000-01-01T00:00:00Z&to=${encodeURIComponent(started)}`);
  t.match(before.body, { checked: 0, agreeing: 0, findings: [] }, 'the period bounds the legs');
});

t.test('in pages, a few at a time, with progress; a period with too many legs is refused', async (t) => {
  const deps: ReconciliationDeps = {
    knex: s.knex, store: s.store, clock: s.clock, adapters: providers(s).byName, pendingAlertSeconds: s.config.providers.pendingAlertSeconds,
  };
  const q = { provider: 'sandbox', from: new Date(started), to: new Date(Date.now() + 60_000) };
  const progress: Array<[number, number]> = [];
  const paged = await reconcile(deps, q, { pageSize: 3, concurrency: 2, onProgress: (done, total) => progress.push([done, total]) });
  const whole = (await reconciliation(sandboxPeriod())).body;
  t.same(paged.findings, whole.findings, 'pages of 3 find what one page finds');
  t.same(progress[0], [0, 9]);
  t.same(progress.at(-1), [9, 9]);
  t.equal(progress.length, 10, 'at the start, then once per leg');
  await t.rejects(reconcile(deps, q, { maxLegs: 8 }), PeriodTooLarge, 'refused before any provider is asked');
  t.equal((await reconcile(deps, q, { maxLegs: 9 })).checked, 9);
});

t.test('bad requests: 400 for an unknown or unconfigured provider and a bad period, 401 without the token', async (t) => {
  for (const query of ['provider=nope', 'provider=pawapay', 'from=yesterday', `from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(started)}`]) {
    const r = await reconciliation(query);
    t.equal(r.status, 400, query);
    t.equal(r.body.error.code, query === 'provider=pawapay' ? 'provider_unavailable' : 'bad_request', query);
  }
  t.equal((await request(h.url, 'GET', '/admin/reconciliation')).status, 401);
});

t.test('npm run reconcile: the same findings as CSV, a progress line per tenth, exit code 1; 0 when clean, 2 on a usage error', async (t) => {
  const to = new Date(Date.now() + 60_000).toISOString();
  const api = (await reconciliation(sandboxPeriod())).body;
  const run = await runReconcile(['--provider', 'sandbox', '--from', started, '--to', to, '--format', 'csv']);
  t.equal(run.code, 1, run.stderr);
  const [header, ...lines] = run.stdout.trim().split('\n');
  t.equal(header, 'reference,owner,kind,provider,provider_reference,ours,theirs,finding,detail,created_at');
  const rows = lines.map((l) => l.split(','));
  t.same(rows.map((r) => [r[0], r[5], r[6], r[7], r[8]]), api.findings.map((f: any) => [f.reference, f.ours, f.theirs ?? '', f.finding, f.detail ?? '']),
    'the findings of the API, in the same order');
  const bars = run.stderr.split('\n').filter((l) => /^\[[#.]{10}\] \d+\/9 legs$/.test(l));
  t.equal(bars[0], '[..........] 0/9 legs', 'progress from the start');
  t.equal(bars.at(-1), '[##########] 9/9 legs', 'to the end');
  t.equal(bars.length, 10, 'a line at each tenth (of 9 legs: each leg)');
  t.match(run.stderr, /9 checked, 6 agree; 1 disagrees, 1 not_seen, 1 pending_too_long, 0 unreachable/);

  const table = await runReconcile(['--provider', 'sandbox', '--from', started, '--to', to]);
  t.equal(table.code, 1);
  t.match(table.stdout, /^reference\s+owner\s+kind\s+provider\s+provider_reference\s+ours\s+theirs\s+finding\s+detail\s+created_at$/m);
  t.match(table.stdout, new RegExp(`^${ids.stuck}\\s+payin\\s+collection\\s+sandbox\\s+\\S+\\s+pending\\s+pending\\s+pending_too_long\\s+-`, 'm'));

  const clean = await runReconcile(['--provider', 'sandbox', '--from', '2000-01-01T00:00:00Z', '--to', '2000-01-02T00:00:00Z', '--format', 'csv']);
  t.equal(clean.code, 0, clean.stderr);
  t.equal(clean.stdout, 'reference,owner,kind,provider,provider_reference,ours,theirs,finding,detail,created_at\n', 'only the header');
  for (const args of [['--format', 'xml'], ['--provider', 'nope'], ['--from', 'yesterday'], ['--bogus', '1']]) {
    const bad = await runReconcile(args);
    t.equal(bad.code, 2, args.join(' '));
    t.match(bad.stderr, /usage: npm run reconcile/);
  }
});

t.test('MTN: a leg MTN failed that we completed disagrees; one MTN does not know was never seen; MTN down is unreachable', async (t) => {
  const set = await h.admin('PUT', '/admin/operators/CM_MTN_MOMO/routing', { providers: ['mtn_momo'] });
  t.equal(set.status, 200, set.text);
  t.teardown(() => h.admin('PUT', '/admin/operators/CM_MTN_MOMO/routing', { providers: ['sandbox'] }));
  const failedAtMtn = await payin('+237670000001');
  const unknownAtMtn = await payin('+237670000001');
  const agreeing = await payin('+237670000001');
  const legId = async (reference: string) => ((await s.knex('provider_legs').where({ reference }).first('provider', 'provider_leg_id')) as any);
  t.equal((await legId(failedAtMtn)).provider, 'mtn_momo');
  const mtnLeg = mtn.legs.get((await legId(failedAtMtn)).provider_leg_id)!;
  t.equal(mtnLeg.status, 'SUCCESSFUL');
  mtnLeg.status = 'FAILED';
  mtnLeg.planned = { status: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' };
  mtn.legs.delete((await legId(unknownAtMtn)).provider_leg_id);

  const query = `provider=mtn_momo&from=${encodeURIComponent(started)}`;
  const res = await reconciliation(query);
  t.equal(res.status, 200, res.text);
  t.match(res.body, { provider: 'mtn_momo', checked: 3, agreeing: 1, counts: { disagrees: 1, not_seen: 1, pending_too_long: 0, unreachable: 0 } });
  const f = byReference(res.body.findings);
  t.match(f[failedAtMtn], { provider: 'mtn_momo', ours: 'completed', theirs: 'failed', finding: 'disagrees', detail: 'INTERNAL_PROCESSING_ERROR' });
  t.match(f[unknownAtMtn], { ours: 'completed', theirs: null, finding: 'not_seen' });
  t.notOk(f[agreeing], 'the leg both say completed is only counted');

  await mtn.down();
  t.teardown(() => mtn.up());
  const down = await reconciliation(query);
  t.equal(down.status, 200, down.text);
  t.match(down.body, { checked: 3, agreeing: 0, counts: { unreachable: 3 } });
  for (const x of down.body.findings) t.match(x, { provider: 'mtn_momo', ours: 'completed', theirs: null, finding: 'unreachable', detail: /mtn_momo/ });
});

t.test('every answer above matches the OpenAPI document', async (t) => {
  const check = responseChecker((await request(h.url, 'GET', '/openapi.json')).body);
  let reports = 0;
  for (const rec of seen.filter((r) => r.path.startsWith('/admin/reconciliation'))) {
    t.same(check(rec).problems, [], `${rec.path} → ${rec.status}`);
    if (rec.status === 200) reports += 1;
  }
  t.ok(reports >= 6, 'reports checked');
});
