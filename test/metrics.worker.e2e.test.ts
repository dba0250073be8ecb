// A split deployment's worker serves its own /metrics (issue 41: metrics per provider): the provider
// gateway runs in `--role worker` processes, so the calls it makes to MTN are counted there, and
// an API process cannot show them. An API process and a worker on one database and one bus: a payin
// through MTN is initiated and polled by the worker, whose /metrics counts those calls (behind the
// operator token), while the API process's counters show none.
import t from 'tap';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { ADMIN_TOKEN, request, startTestApp } from './helpers/app.ts';
import { parseMetrics, series } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled } from './helpers/money.ts';
import { simulatedProviders } from './helpers/providers.ts';

const { env, close } = await simulatedProviders({ n: 2 });
const bus = new MemoryBus();
const api = await startTestApp({ env, bus, role: 'api' });
const workerConfig = loadConfig({ ...env, DATA_DIR: api.dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent', SANDBOX_SETTLE_MS: '50' }, ['--role', 'worker']);
const worker = await startApp({ config: { ...workerConfig, databaseUrl: api.database.url }, database: api.database.db, bus, log: createLogger('silent'), port: 0 });
const workerUrl = worker.url!;
t.teardown(async () => {
  await worker.stop();
  await api.stop();
  await close();
});

const scrape = async (url: string) => {
  const r = await request(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (r.status !== 200) throw new Error(`metrics: ${r.status} ${r.text}`);
  return parseMetrics(r.text);
};
const mtnCalls = (m: Map<string, number>, operation: string) =>
  m.get(series('provider_request_duration_seconds_count', { provider: 'mtn_momo', operation, outcome: 'ok' })) ?? 0;

t.test('the worker serves its metrics behind the operator token, and nothing of the APIs', async (t) => {
  t.equal((await request(workerUrl, 'GET', '/metrics')).status, 401, 'no token: 401');
  t.equal((await request(workerUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 200);
  t.equal((await request(workerUrl, 'GET', '/payins', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 404, 'no merchant API on a worker');
});

t.test('the gateway\'s calls to MTN are counted by the worker that made them', async (t) => {
  t.equal((await api.admin('PUT', '/admin/operators/CM_MTN_MOMO/routing', { providers: ['mtn_momo'] })).status, 200);
  const m = await api.newMerchant('Split deployment');
  const customer = await newCustomer(api, m, 'CM', '+237670000001');
  const q = await quote(api, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await api.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
  t.equal(p.status, 201);
  t.equal((await settled(api, m, 'payins', p.body.id)).status, 'completed', 'initiated and settled by the worker');
  const atWorker = await scrape(workerUrl);
  t.ok(mtnCalls(atWorker, 'initiate') >= 1, `the worker counted its request-to-pay (${mtnCalls(atWorker, 'initiate')})`);
  t.ok(mtnCalls(atWorker, 'status') >= 1, `and its status queries (${mtnCalls(atWorker, 'status')})`);
  const atApi = await scrape(api.url);
  t.equal(mtnCalls(atApi, 'initiate'), 0, 'the API process made none');
});
