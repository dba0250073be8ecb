// Metrics per provider (issue 41 point 7, CONTRACT §15): calls and their latency
// (provider_request_duration_seconds), errors by kind (provider_errors_total: not_taken, in_doubt,
// http), and the legs each provider has that are not final yet (provider_pending_legs, with the age
// of the oldest), read from the scheduled status checks at each scrape. Against the simulators of
// MTN MoMo and pawaPay (test/simulators/), which keep legs pending until the test settles them.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { parseMetrics, series } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { simulatedProviders } from './helpers/providers.ts';

const { mtn, pawapay, env, close } = await simulatedProviders({ n: 1, mtn: { autoSettle: false }, pawapay: { autoSettle: false } });
const h = await startTestApp({ env });
t.teardown(async () => {
  await h.stop();
  await close();
});

const scrape = async () => {
  const r = await h.admin('GET', '/metrics');
  if (r.status !== 200) throw new Error(`metrics: ${r.status} ${r.text}`);
  return parseMetrics(r.text);
};
const value = (m: Map<string, number>, name: string, labels: Record<string, string> = {}) => m.get(series(name, labels)) ?? 0;
const pending = (m: Map<string, number>, provider: string) => m.get(series('provider_pending_legs', { provider }));
const errors = (m: Map<string, number>, provider: string, operation: string, kind: string) => value(m, 'provider_errors_total', { provider, operation, kind });
const routing = (code: string, providers: string[]) => h.admin('PUT', `/admin/operators/${code}/routing`, { providers });

const m = await h.newMerchant('Provider metrics');
const customer = await newCustomer(h, m, 'CM', '+237670000001');
async function payin(phone: string): Promise<string> {
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  return p.body.id as string;
}
const statusOf = async (id: string) => (await h.as(m, 'GET', `/payins/${id}`)).body.status as string;
const legWith = async (id: string) => ((await h.app.services.knex('provider_legs').where({ reference: id }).first('provider')) as { provider: string } | undefined)?.provider;

t.test('pending legs per provider: every configured provider has a series; a leg counts while it is not final', async (t) => {
  await routing('CM_MTN_MOMO', ['mtn_momo']);
  const idle = await scrape();
  t.same(['sandbox', 'mtn_momo', 'pawapay'].map((p) => pending(idle, p)), [0, 0, 0], 'a 0 for each configured provider, nothing pending yet');
  t.equal(value(idle, 'provider_oldest_pending_leg_seconds', { provider: 'mtn_momo' }), 0);

  const id = await payin('+237670000101');
  const waiting = await until('the MTN leg counted as pending', async () => {
    const x = await scrape();
    return pending(x, 'mtn_momo') === 1 ? x : undefined;
  });
  t.equal(await statusOf(id), 'pending');
  t.equal(pending(waiting, 'pawapay'), 0, 'nothing at pawaPay');
  await until('its status asked at least once', async () => mtn.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/requesttopay/${id}`)));
  t.ok(value(await scrape(), 'provider_oldest_pending_leg_seconds', { provider: 'mtn_momo' }) > 0, 'the oldest pending leg has an age');
  t.match(waiting.get(series('provider_request_duration_seconds_count', { provider: 'mtn_momo', operation: 'initiate', outcome: 'ok' })), Number,
    'the call timed, by provider and operation');

  mtn.settle(id);
  t.equal((await settled(h, m, 'payins', id)).status, 'completed');
  await until('no MTN leg pending any more', async () => pending(await scrape(), 'mtn_momo') === 0);
});

t.test('errors by provider and kind: not taken (down), in doubt (500 to an initiation), http (500 to a status query)', async (t) => {
  await routing('CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  t.teardown(() => routing('CM_MTN_MOMO', ['mtn_momo']));
  const before = await scrape();

  // MTN down: nothing sent, not taken; pawaPay takes the leg and keeps it pending.
  await mtn.down();
  const failedOver = await payin('+237670000102');
  await until('pawaPay has the leg', async () => (await legWith(failedOver)) === 'pawapay' && pawapay.transaction('deposits', failedOver));
  await mtn.up();
  const atPawapay = await until('the pawaPay leg counted as pending', async () => {
    const x = await scrape();
    return pending(x, 'pawapay') === 1 ? x : undefined;
  });
  t.equal(errors(atPawapay, 'mtn_momo', 'initiate', 'not_taken') - errors(before, 'mtn_momo', 'initiate', 'not_taken'), 1, 'MTN unreachable: not taken');

  // MTN records the leg and answers 500: in doubt, the leg stays with MTN.
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 500, record: true });
  // Then its first status query is answered 500 too: an HTTP error, asked again later.
  mtn.fault({ method: 'GET', path: '/collection/v1_0/requesttopay/', status: 500, record: true });
  const doubted = await payin('+237670000103');
  await until('the status asked after the failed one', async () => mtn.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/requesttopay/${doubted}`)).length >= 2);
  const after = await scrape();
  const d = (provider: string, operation: string, kind: string) => errors(after, provider, operation, kind) - errors(before, provider, operation, kind);
  t.equal(d('mtn_momo', 'initiate', 'in_doubt'), 1, 'a 500 to an initiation: in doubt');
  t.equal(d('mtn_momo', 'status', 'http'), 1, 'a 500 to a status query: http');
  t.equal(await legWith(doubted), 'mtn_momo', 'no failover from a leg in doubt');
  t.equal(pending(after, 'mtn_momo'), 1, 'the leg in doubt is pending at MTN');
  t.equal(pending(after, 'pawapay'), 1);
  t.equal(d('pawapay', 'initiate', 'not_taken') + d('pawapay', 'initiate', 'in_doubt') + d('pawapay', 'status', 'http'), 0, 'pawaPay had no error');

  // pawaPay records a deposit and answers 500: in doubt at pawaPay.
  await routing('CM_MTN_MOMO', ['pawapay']);
  pawapay.failNextInitiation('error');
  const doubtedAtPawapay = await payin('+237670000104');
  await until('pawaPay in doubt counted', async () => errors(await scrape(), 'pawapay', 'initiate', 'in_doubt') - errors(before, 'pawapay', 'initiate', 'in_doubt') === 1);

  mtn.settle(doubted);
  pawapay.settle('deposits', failedOver);
  pawapay.settle('deposits', doubtedAtPawapay);
  for (const id of [failedOver, doubted, doubtedAtPawapay]) t.equal((await settled(h, m, 'payins', id)).status, 'completed');
  await until('nothing pending at either provider', async () => {
    const x = await scrape();
    return pending(x, 'mtn_momo') === 0 && pending(x, 'pawapay') === 0;
  });
  const help = (await h.admin('GET', '/metrics')).text;
  t.match(help, /# TYPE provider_errors_total counter/);
  t.match(help, /# TYPE provider_pending_legs gauge/);
});
