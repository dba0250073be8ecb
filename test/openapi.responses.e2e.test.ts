// The OpenAPI document's response schemas are true (issue 31 point 2): every object a response
// declares lists in `required` what is always present, and the real answers of the main flows
// (quotes, payins, payouts, transfers with a relaunch, wallets, merchants, keys, customers, lists,
// events, histories, errors) each validate against the schema declared for their status.
import t from 'tap';
import { request, startTestApp } from './helpers/app.ts';
import { businessDay } from './helpers/finance.ts';
import { recording, responseChecker, type Recorded } from './helpers/openapi-responses.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '20' } });
t.teardown(() => h.stop());
const doc = (await request(h.url, 'GET', '/openapi.json')).body;

/** Every object schema reachable from a response, with where it was found. */
function responseObjects(): Array<{ where: string; schema: any }> {
  const out: Array<{ where: string; schema: any }> = [];
  const seen = new Set<unknown>();
  const walk = (s: any, where: string): void => {
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    if (s.$ref) return walk(doc.components.schemas[String(s.$ref).split('/').pop()!], String(s.$ref));
    if (s.properties) out.push({ where, schema: s });
    for (const [k, v] of Object.entries<any>(s.properties ?? {})) walk(v, `${where}.${k}`);
    for (const k of ['items', 'additionalProperties']) walk(s[k], `${where}[]`);
    for (const k of ['anyOf', 'oneOf', 'allOf']) for (const v of s[k] ?? []) walk(v, where);
  };
  for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const op of Object.values(ops)) {
      for (const [status, r] of Object.entries<any>(op.responses)) {
        for (const media of Object.values<any>(r.content ?? {})) walk(media.schema, `${op.operationId} ${status} (${p})`);
      }
    }
  }
  return out;
}

t.test('every object a response declares says which of its fields are always there', async (t) => {
  const objects = responseObjects();
  t.ok(objects.length > 30, 'the walk found the response objects');
  for (const { where, schema } of objects) {
    t.ok(Array.isArray(schema.required) && schema.required.length > 0, `${where}: required is listed`);
    for (const name of schema.required ?? []) t.ok(name in schema.properties, `${where}: required ${name} is a declared property`);
  }
});

t.test('the answers of the main flows match their declared schemas, required fields included', async (t) => {
  const seen: Recorded[] = [];
  const r = recording(h, seen);
  const day = await businessDay(r, 'Schemas');
  const { m, customer } = day;
  const other = await h.newMerchant('Other');
  // Reads and lists of every resource, its event history, and the merchant's events.
  for (const [kind, ids] of [['payins', day.payins], ['payouts', day.payouts], ['transfers', day.transfers]] as const) {
    for (const id of Object.values(ids)) {
      await r.as(m, 'GET', `/${kind}/${id}`);
      await r.as(m, 'GET', `/${kind}/${id}/events`);
    }
    await r.as(m, 'GET', `/${kind}?limit=2`);
    await r.as(m, 'GET', `/${kind}/${Object.values(ids)[0]}`.replace(/[0-9a-f-]{36}$/, '00000000-0000-4000-8000-000000000000'));
  }
  const quotes = await r.as(m, 'GET', '/quotes?limit=100');
  for (const q of quotes.body.data.slice(0, 3)) {
    await r.as(m, 'GET', `/quotes/${q.id}`);
    await r.as(m, 'GET', `/quotes/${q.id}/events`);
  }
  await r.as(m, 'GET', `/customers/${customer}`);
  await r.as(m, 'GET', `/customers/${customer}/events`);
  await r.as(m, 'GET', `/customers/${customer}/kyc`);
  await r.as(m, 'GET', '/customers');
  const events = await r.as(m, 'GET', '/events?limit=100');
  t.ok(events.body.data.length > 5, 'events were recorded');
  for (const e of events.body.data.slice(0, 3)) await r.as(m, 'GET', `/events/${e.id}`);
  await r.as(m, 'POST', `/events/${events.body.data[0].id}/redeliver`); // no webhook URL: a 400 error body
  await r.as(m, 'GET', '/wallets');
  await r.as(m, 'GET', '/operators');
  // Errors: a schema refusal, a business refusal, an idempotency conflict, bad credentials.
  await r.as(m, 'POST', '/quotes/payin', { country_code: 'CM' }, { idem: true });
  await r.as(m, 'POST', '/payins', { quote_id: quotes.body.data[0].id, customer_id: customer, source: { country_code: 'CM', rail_type: 'mobile_money' } }, { idem: true });
  await r.as(m, 'POST', '/customers', { first_name: 'A', last_name: 'B' }, { idem: 'same-key' });
  await r.as(m, 'POST', '/customers', { first_name: 'C', last_name: 'D' }, { idem: 'same-key' });
  await r.as({ ...m, apiSecret: 'sk_wrong' }, 'GET', '/wallets');
  // The operator's side.
  const id = m.merchantId;
  await r.admin('POST', '/admin/merchants', { name: 'Fresh' });
  await r.admin('GET', `/admin/merchants/${id}`);
  await r.admin('POST', `/admin/merchants/${other.merchantId}/status`, { status: 'inactive' });
  await r.admin('PUT', `/admin/merchants/${id}/pricing`, { payin: { percent: '1.5', fixed: '0' } });
  const key = await r.admin('POST', `/admin/merchants/${id}/api-keys`, {});
  await r.admin('GET', `/admin/merchants/${id}/api-keys`);
  await r.admin('POST', `/admin/merchants/${id}/api-keys/${key.body.id}/rotate`, { grace_seconds: 0 });
  await r.admin('POST', `/admin/merchants/${id}/api-keys/${key.body.id}/revoke`);
  await r.admin('POST', `/admin/merchants/${id}/webhook/rotate-secret`); // no URL yet: 400
  await r.admin('POST', `/admin/merchants/${id}/dashboard-users`, { email: 'staff@example.com' });
  await r.admin('GET', `/admin/merchants/${id}/dashboard-users`);
  await r.admin('GET', `/admin/merchants/${id}/statements?currency=XOF`);
  await r.admin('GET', '/admin/projections');
  await r.admin('GET', `/admin/streams/payin-${day.payins.completed}`);
  await r.admin('POST', '/admin/audit');
  for (const p of ['/healthz', '/readyz']) {
    const res = await request(h.url, 'GET', p);
    seen.push({ method: 'GET', path: p, status: res.status, body: res.body });
  }

  const check = responseChecker(doc);
  const covered = new Set<string>();
  for (const rec of seen) {
    const { operationId, problems } = check(rec);
    t.same(problems, [], `${rec.method} ${rec.path} → ${rec.status}`);
    if (operationId && rec.status < 300) covered.add(operationId);
  }
  const statuses = new Set(seen.map((x) => x.status));
  for (const s of [200, 201, 400, 401, 404, 409]) t.ok(statuses.has(s), `a ${s} answer was checked`);
  for (const op of [
    'createPayinQuote', 'createPayoutQuote', 'createTransferQuote', 'getQuote', 'listQuotes', 'getQuoteEvents',
    'createPayin', 'getPayin', 'listPayins', 'getPayinEvents', 'createPayout', 'getPayout', 'listPayouts', 'getPayoutEvents',
    'createTransfer', 'getTransfer', 'listTransfers', 'getTransferEvents', 'relaunchTransferPayout',
    'createCustomer', 'getCustomer', 'listCustomers', 'getCustomerEvents', 'getKyc', 'listWallets', 'listOperators',
    'listEvents', 'getEvent', 'adminCreateMerchant', 'adminGetMerchant', 'adminSetMerchantStatus', 'adminSetRouting',
    'adminSetPricing', 'adminCreateApiKey', 'adminListApiKeys', 'adminRotateApiKey', 'adminRevokeApiKey', 'adminTopUpWallet',
    'adminInviteDashboardUser', 'adminListDashboardUsers', 'adminWalletStatement', 'adminProjectionStatus', 'adminReadStream',
    'adminRunAudit', 'healthz', 'readyz',
  ]) t.ok(covered.has(op), `${op} answered and was checked`);
});
