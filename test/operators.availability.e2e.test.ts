// Operator availability over HTTP (CONTRACT §14): set by the operator API and recorded as events
// (who, when, from what to what), shown by GET /operators, enforced on quotes and payments (closed →
// 400 operator_unavailable, nothing held, the quote not consumed; delayed said on the quote), never
// on payments already in flight, and seen at once by a second process on the same database.
// Runs on the embedded PostgreSQL and (test:services) on PostgreSQL + NATS.
import t from 'tap';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, settledPayins, topUp, until, wallet } from './helpers/money.ts';
import { getTransfer, payerCM, recipientSN, settledTransfer, transferMerchant, transferQuote, walletsOf } from './helpers/transfers.ts';
import { providers } from '../infra/providers/index.ts';
import { signedInClient } from './helpers/dashboard.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const setAvailability = (code: string, body: unknown) => h.admin('PUT', `/admin/operators/${code}/availability`, body);
const history = async (code: string) => (await h.admin('GET', `/admin/operators/${code}/availability/history`)).body.data;
const reopen = (code: string) => setAvailability(code, { payin: 'operational', payout: 'operational' });

const recipient = (phone: string) => ({
  country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye',
});
const postPayout = (m: MerchantCreds, customer: string, quoteId: string, phone = '+221770000001') =>
  h.as(m, 'POST', '/payouts', { quote_id: quoteId, customer_id: customer, payment_reason_text: 'Invoice 7', recipient: recipient(phone) }, { idem: true });
const operatorsOf = async (m: MerchantCreds) =>
  Object.fromEntries((await h.as(m, 'GET', '/operators')).body.data.map((o: { operator_code: string; availability: unknown }) => [o.operator_code, o.availability]));

t.test('the operator API: list, read, set, history; bad input changes nothing', async (t) => {
  const all = await h.admin('GET', '/admin/operators');
  t.equal(all.status, 200);
  t.equal(all.body.data.length, 13, 'every operator of the catalogue');
  t.ok(all.body.data.every((o: any) => o.payin === 'operational' && o.payout === 'operational' && o.updated_at === null), 'operational by default');
  const before = (await h.admin('GET', '/admin/operators/CI_MOOV_MOMO/availability')).body;
  t.match(before, { operator_code: 'CI_MOOV_MOMO', name: 'Moov Money', country_code: 'CI', payin: 'operational', payout: 'operational', updated_at: null, updated_by: null });

  const refusals: Array<[unknown, string, number]> = [
    [{ payin: 'down' }, 'CI_MOOV_MOMO', 400],
    [{}, 'CI_MOOV_MOMO', 400],
    [{ payin: 'closed', refunds: 'closed' }, 'CI_MOOV_MOMO', 400],
    [{ payin: 'closed', payout: 'sometimes' }, 'CI_MOOV_MOMO', 400],
    [{ payin: 'closed' }, 'XX_NOPE_MOMO', 404],
  ];
  for (const [body, code, status] of refusals) {
    const r = await setAvailability(code, body);
    t.equal(r.status, status, `${JSON.stringify(body)} on ${code} → ${status}`);
    t.equal(r.body.error.code, status === 400 ? 'bad_request' : 'not_found');
  }
  t.equal((await h.admin('GET', '/admin/operators/XX_NOPE_MOMO/availability')).status, 404);
  t.equal((await h.admin('GET', '/admin/operators/XX_NOPE_MOMO/availability/history')).status, 404);
  const m = await h.newMerchant();
  t.equal((await h.as(m, 'PUT', '/admin/operators/CI_MOOV_MOMO/availability', { payin: 'closed' })).status, 401, 'operators only');
  t.equal((await request(h.url, 'PUT', '/admin/operators/CI_MOOV_MOMO/availability', { body: { payin: 'closed' } })).status, 401);
  t.same((await h.admin('GET', '/admin/operators/CI_MOOV_MOMO/availability')).body, before, 'nothing changed');
  t.same(await history('CI_MOOV_MOMO'), [], 'nothing recorded');

  const set = await setAvailability('CI_MOOV_MOMO', { payout: 'closed' });
  t.equal(set.status, 200);
  t.match(set.body, {
    operator_code: 'CI_MOOV_MOMO', payin: 'operational', payout: 'closed', updated_at: String,
    updated_by: { actor: 'operator', credential: /^admin-token:[0-9a-f]{12}$/, request_id: String },
  });
  t.notOk(JSON.stringify(set.body).includes(ADMIN_TOKEN), 'the credential is named, never shown');
  t.equal((await setAvailability('CI_MOOV_MOMO', { payout: 'closed' })).status, 200, 'the same value again');
  const both = await setAvailability('CI_MOOV_MOMO', { payin: 'delayed', payout: 'operational' });
  t.match(both.body, { payin: 'delayed', payout: 'operational' });
  const changes = await history('CI_MOOV_MOMO');
  t.equal(changes.length, 2, 'one change per PUT that changed something (the repeat recorded nothing)');
  t.match(changes[0], { operator_code: 'CI_MOOV_MOMO', version: 1, changes: [{ flow: 'payout', from: 'operational', to: 'closed' }], changed_by: set.body.updated_by, at: set.body.updated_at });
  t.match(changes[1], { version: 2, changes: [{ flow: 'payin', from: 'operational', to: 'delayed' }, { flow: 'payout', from: 'closed', to: 'operational' }] });
  t.ok(Date.parse(changes[1].at) >= Date.parse(changes[0].at), 'each change dated');
  const events = await s.aggregates.store.readStream('operator-CI_MOOV_MOMO');
  t.same(events.map((e) => e.type), ['operator.availability_changed', 'operator.availability_changed'], 'recorded as events on the operator\'s stream');
  t.equal(events[0]!.metadata.requestId, set.body.updated_by.request_id, 'with the request that made it');
  t.equal((await h.admin('GET', '/admin/streams/operator-CI_MOOV_MOMO')).body.data.length, 2, 'readable as any stream by the operator');
  t.match((await h.admin('GET', '/admin/operators')).body.data.find((o: any) => o.operator_code === 'CI_MOOV_MOMO'), { payin: 'delayed', payout: 'operational' });
  await reopen('CI_MOOV_MOMO');
});

t.test('GET /operators shows each flow\'s availability as it is now', async (t) => {
  const m = await h.newMerchant();
  t.same((await operatorsOf(m)).TG_MOOV_MOMO, { payin: 'operational', payout: 'operational' });
  await setAvailability('TG_MOOV_MOMO', { payin: 'closed', payout: 'delayed' });
  t.same((await operatorsOf(m)).TG_MOOV_MOMO, { payin: 'closed', payout: 'delayed' });
  t.same((await operatorsOf(m)).TG_TOGOCOM_MOMO, { payin: 'operational', payout: 'operational' }, 'another operator untouched');
  await reopen('TG_MOOV_MOMO');
  t.same((await operatorsOf(m)).TG_MOOV_MOMO, { payin: 'operational', payout: 'operational' });
});

t.test('payouts: closed refuses the quote and the payout (nothing held, quote kept); in flight still completes', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  await topUp(h, m, 'XOF', '50000');
  const inFlightQuote = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000'));
  const inFlight = await postPayout(m, customer, inFlightQuote.id, '+221770000098'); // pending until its callback
  t.equal(inFlight.status, 201);
  const kept = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
  t.equal(kept.operator_availability, 'operational');

  await setAvailability('SN_WAVE_MOMO', { payout: 'closed' });
  const before = await wallet(h, m, 'XOF');
  t.match(before, { available: '40000', reserved: '10000' });
  const refused = await postPayout(m, customer, kept.id);
  t.equal(refused.status, 400);
  t.equal(refused.body.error.code, 'operator_unavailable');
  t.match(refused.body.error.details, [{ field: 'recipient.operator_code', message: /closed for payouts/ }]);
  t.same(await wallet(h, m, 'XOF'), before, 'nothing held');
  t.equal((await h.as(m, 'GET', `/quotes/${kept.id}`)).body.status, 'active', 'the quote not consumed');
  const quoteRefused = await h.as(m, 'POST', '/quotes/payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'), { idem: true });
  t.equal(quoteRefused.status, 400);
  t.match(quoteRefused.body.error, { code: 'operator_unavailable', details: [{ field: 'operator_code' }] });
  t.equal((await h.as(m, 'POST', '/quotes/payin', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'), { idem: true })).status, 201, 'payins on it go on');

  // The payout created before the close is not abandoned: its outcome settles it.
  await until('submitted', async () => (await h.as(m, 'GET', `/payouts/${inFlight.body.id}`)).body.provider_reference);
  const cb = await providers(s).sandbox.callbackFor(inFlight.body.id, { state: 'completed' });
  t.equal((await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers })).status, 200);
  t.match(await settled(h, m, 'payouts', inFlight.body.id), { status: 'completed' });
  t.match(await wallet(h, m, 'XOF'), { available: '40000', reserved: '0' }, 'its hold posted');

  await setAvailability('SN_WAVE_MOMO', { payout: 'operational' });
  const after = await postPayout(m, customer, kept.id);
  t.equal(after.status, 201, 'the kept quote is used once reopened');
  t.equal((await h.as(m, 'GET', `/quotes/${kept.id}`)).body.status, 'consumed');
});

t.test('payins: closed refuses the quote and the payin, the quote kept; payouts on it go on', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'CM', '+237670000001');
  const kept = await quote(h, m, 'payin', leg('CM_ORANGE_MOMO', 'CM', 'XAF', '5000'));
  await setAvailability('CM_ORANGE_MOMO', { payin: 'closed' });
  const payin = () => h.as(m, 'POST', '/payins', { quote_id: kept.id, customer_id: customer, source: party('CM', 'CM_ORANGE_MOMO', '+237670000001') }, { idem: true });
  const refused = await payin();
  t.equal(refused.status, 400);
  t.match(refused.body.error, { code: 'operator_unavailable', details: [{ field: 'source.operator_code' }] });
  t.equal((await h.as(m, 'GET', `/quotes/${kept.id}`)).body.status, 'active', 'the quote not consumed');
  t.equal((await h.as(m, 'GET', '/payins')).body.data.length, 0, 'no payin');
  t.match((await h.as(m, 'POST', '/quotes/payin', leg('CM_ORANGE_MOMO', 'CM', 'XAF', '5000'), { idem: true })).body.error, { code: 'operator_unavailable' });
  t.equal((await h.as(m, 'POST', '/quotes/payout', leg('CM_ORANGE_MOMO', 'CM', 'XAF', '5000'), { idem: true })).status, 201, 'payouts on it go on');
  await reopen('CM_ORANGE_MOMO');
  t.equal((await payin()).status, 201, 'accepted once reopened');
});

t.test('refunds: a refund is a disbursement, refused while the payin\'s operator is closed for payouts (CONTRACT §17)', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'CM', '+237670000001');
  const [payinId] = await settledPayins(h, m, customer, ['+237670000001']);
  const before = await wallet(h, m, 'XAF');
  await setAvailability('CM_MTN_MOMO', { payout: 'closed' });
  t.teardown(() => reopen('CM_MTN_MOMO'));
  const refund = () => h.as(m, 'POST', '/refunds', { payin_id: payinId, amount: '1000' }, { idem: true });
  const refused = await refund();
  t.equal(refused.status, 400);
  t.match(refused.body.error, { code: 'operator_unavailable', details: [{ field: 'payin_id' }] });
  t.same(await wallet(h, m, 'XAF'), before, 'nothing held');
  t.match((await h.as(m, 'GET', `/payins/${payinId}`)).body, { refunded_amount: '0', refund_ids: [] }, 'the payin not claimed');
  t.equal((await h.as(m, 'GET', '/refunds')).body.data.length, 0, 'no refund');
  await reopen('CM_MTN_MOMO');
  t.equal((await refund()).status, 201, 'accepted once reopened');
});

t.test('transfers: the payer\'s operator checked for payins, the recipient\'s for payouts', async (t) => {
  const m = await transferMerchant(h);
  const transfer = (quoteId: string) =>
    h.as(m, 'POST', '/transfers', { quote_id: quoteId, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  const kept = await transferQuote(h, m);
  const before = await walletsOf(h, m);

  await setAvailability('CM_MTN_MOMO', { payin: 'closed' });
  const payerClosed = await transfer(kept.id);
  t.equal(payerClosed.status, 400);
  t.match(payerClosed.body.error, { code: 'operator_unavailable', details: [{ field: 'payer.operator_code' }] });
  const quotePayerClosed = await h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000',
  }, { idem: true });
  t.match(quotePayerClosed.body.error, { code: 'operator_unavailable', details: [{ field: 'payer_operator_code' }] });
  await setAvailability('CM_MTN_MOMO', { payin: 'operational', payout: 'closed' });
  t.equal((await transferQuote(h, m)).operator_availability, 'operational', 'the payer\'s operator closed for payouts only: no matter');

  await setAvailability('SN_WAVE_MOMO', { payout: 'closed' });
  const recipientClosed = await transfer(kept.id);
  t.match(recipientClosed.body.error, { code: 'operator_unavailable', details: [{ field: 'recipient.operator_code' }] });
  t.same(await walletsOf(h, m), before, 'nothing held');
  t.equal((await h.as(m, 'GET', `/quotes/${kept.id}`)).body.status, 'active', 'the quote not consumed');
  await reopen('SN_WAVE_MOMO');
  await reopen('CM_MTN_MOMO');
  t.equal((await transfer(kept.id)).status, 201, 'accepted once reopened');
});

t.test('relaunch: a new disbursement is refused while the recipient\'s operator is closed for payouts', async (t) => {
  const m = await transferMerchant(h);
  const kept = await transferQuote(h, m);
  const created = await h.as(m, 'POST', '/transfers', {
    quote_id: kept.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN('+221770000099'),
  }, { idem: true });
  t.equal(created.status, 201);
  const failed = await settledTransfer(h, m, created.body.id);
  t.match(failed, { status: 'failed', payin_status: 'completed', payout_status: 'failed' });
  const before = await walletsOf(h, m);
  const relaunch = (key: string) =>
    h.as(m, 'POST', `/transfers/${created.body.id}/relaunch-payout`, { recipient: recipientSN('+221770000002') }, { idem: key });

  await setAvailability('SN_WAVE_MOMO', { payout: 'closed' });
  const refused = await relaunch(`closed-${created.body.id}`);
  t.equal(refused.status, 400);
  t.match(refused.body.error, { code: 'operator_unavailable', details: [{ field: 'recipient.operator_code' }] });
  t.same(await walletsOf(h, m), before, 'nothing held again');
  t.match((await getTransfer(h, m, created.body.id)).body, { status: 'failed', payout_status: 'failed' }, 'the transfer unchanged');
  await reopen('SN_WAVE_MOMO');
  const relaunched = await relaunch(`open-${created.body.id}`);
  t.equal(relaunched.status, 200, 'relaunched once reopened');
  t.equal((await settledTransfer(h, m, created.body.id, 'completed')).payout_status, 'completed');
});

t.test('bulk payouts: an item on a closed operator is refused as its own POST /payouts would be, the others go on', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  await topUp(h, m, 'XOF', '20000');
  const wave = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '3000'));
  const free = await quote(h, m, 'payout', leg('SN_FREE_MOMO', 'SN', 'XOF', '4000'));
  await setAvailability('SN_FREE_MOMO', { payout: 'closed' });
  const item = (reference: string, quoteId: string, operator: string) => ({
    reference, quote_id: quoteId, customer_id: customer, payment_reason_text: 'x', recipient: { ...recipient('+221770000098'), operator_code: operator },
  });
  const r = await h.as(m, 'POST', '/payouts/bulk', { items: [item('A', wave.id, 'SN_WAVE_MOMO'), item('B', free.id, 'SN_FREE_MOMO')] }, { idem: true });
  t.equal(r.status, 201);
  t.match(r.body.items, [
    { reference: 'A', status: 201 },
    { reference: 'B', status: 400, error: { error: { code: 'operator_unavailable', details: [{ field: 'recipient.operator_code' }] } } },
  ]);
  t.match(await wallet(h, m, 'XOF'), { available: '17000', reserved: '3000' }, 'only the open operator\'s payout held');
  t.equal((await h.as(m, 'GET', `/quotes/${free.id}`)).body.status, 'active', 'the refused item\'s quote kept');
  await reopen('SN_FREE_MOMO');
});

t.test('delayed: accepted, and the quote says so', async (t) => {
  const m = await transferMerchant(h);
  await setAvailability('SN_FREE_MOMO', { payout: 'delayed' });
  const q = await quote(h, m, 'payout', leg('SN_FREE_MOMO', 'SN', 'XOF', '5000'));
  t.equal(q.operator_availability, 'delayed');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.operator_availability, 'delayed', 'as read later');
  t.equal((await quote(h, m, 'payin', leg('SN_FREE_MOMO', 'SN', 'XOF', '5000'))).operator_availability, 'operational', 'per flow');
  const p = await h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: m.customerId, payment_reason_text: 'x', recipient: { ...recipient('+221770000001'), operator_code: 'SN_FREE_MOMO' },
  }, { idem: true });
  t.equal(p.status, 201, 'a payout on a delayed operator is accepted');
  const tq = await transferQuote(h, m, { recipient_operator_code: 'SN_FREE_MOMO' });
  t.equal(tq.operator_availability, 'delayed', 'a transfer whose recipient\'s operator is delayed for payouts');
  await reopen('SN_FREE_MOMO');
});

t.test('the dashboard home page announces the merchant\'s closed and delayed operators', async (t) => {
  const m = await h.newMerchant('Dashboard');
  // CI_ORANGE_MOMO not enabled for this merchant: its outage is none of its business.
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, {
    payin_operators: ['CI_WAVE_MOMO', 'CI_MTN_MOMO'], payout_operators: ['CI_WAVE_MOMO', 'CI_MTN_MOMO'],
  });
  const c = await signedInClient(h, m.merchantId, 'ops@example.com');
  const notices = async () => [...(await c.get('/dashboard')).text.matchAll(/<li data-operator="([A-Z_]+)" data-flow="(\w+)" data-availability="(\w+)">([\s\S]*?)<\/li>/g)]
    .map((x) => ({ operator: x[1], flow: x[2], availability: x[3], text: x[4]!.replace(/\s+/g, ' ') }));
  t.notMatch((await c.get('/dashboard')).text, /Operator status/, 'no notice while every operator is operational');

  await setAvailability('CI_WAVE_MOMO', { payin: 'closed' });
  await setAvailability('CI_MTN_MOMO', { payout: 'delayed' });
  await setAvailability('CI_ORANGE_MOMO', { payin: 'closed' });
  const home = await c.get('/dashboard');
  t.match(home.text, /<section class="notice error" role="alert"[^>]*>\s*<h2 id="operators-h">Operator status<\/h2>/, 'a closed operator is an alert');
  const shown = await notices();
  t.match(shown, [
    { operator: 'CI_MTN_MOMO', flow: 'payout', availability: 'delayed', text: /delayed for payouts/ },
    { operator: 'CI_WAVE_MOMO', flow: 'payin', availability: 'closed', text: /closed for payins.*operator_unavailable.*already made still complete/ },
  ]);
  t.equal(shown.length, 2, 'only the merchant\'s own operators');

  await reopen('CI_WAVE_MOMO');
  t.match((await c.get('/dashboard')).text, /<section class="notice warn" role="status"/, 'only a delay left: a status, not an alert');
  await reopen('CI_MTN_MOMO');
  await reopen('CI_ORANGE_MOMO');
  t.same(await notices(), [], 'gone once operational again');
});

t.test('a second process sees each change at once, its cache notwithstanding', async (t) => {
  const second: RunningApp = await startApp({
    config: {
      ...loadConfig({
        // On the services lane both processes share the bus too (the first one's NATS prefix).
        ...(h.natsPrefix ? { NATS_URL: process.env.NATS_URL!, NATS_PREFIX: h.natsPrefix } : {}),
        ADMIN_TOKEN, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent', SANDBOX_SETTLE_MS: '50', ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' }, []),
      databaseUrl: h.database.url,
    },
    log: createLogger('silent'),
    port: 0,
  });
  t.teardown(() => second.stop());
  const on = (m: MerchantCreds, method: string, p: string, body?: unknown) => request(second.url!, method, p, {
    body, headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret, 'idempotency-key': `k${Math.random()}` },
  });
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'BJ', '+2290197000001');
  await topUp(h, m, 'XOF', '20000');
  // The second process caches the operator's state as it decides on it (set once, so its stream exists).
  await setAvailability('BJ_MOOV_MOMO', { payout: 'delayed' });
  const warm = await on(m, 'POST', '/quotes/payout', leg('BJ_MOOV_MOMO', 'BJ', 'XOF', '5000'));
  t.equal(warm.body.operator_availability, 'delayed');
  const kept = (await on(m, 'POST', '/quotes/payout', leg('BJ_MOOV_MOMO', 'BJ', 'XOF', '5000'))).body;

  await setAvailability('BJ_MOOV_MOMO', { payout: 'closed' }); // through the first process
  t.match((await on(m, 'POST', '/quotes/payout', leg('BJ_MOOV_MOMO', 'BJ', 'XOF', '5000'))).body.error, { code: 'operator_unavailable' }, 'its next quote refused');
  const payout = () => on(m, 'POST', '/payouts', {
    quote_id: kept.id, customer_id: customer, payment_reason_text: 'x',
    recipient: { country_code: 'BJ', rail_type: 'mobile_money', operator_code: 'BJ_MOOV_MOMO', phone: '+2290197000001', recipient_type: 'individual', first_name: 'A', last_name: 'B' },
  });
  t.match((await payout()).body.error, { code: 'operator_unavailable' }, 'its next payout refused');
  t.match(await wallet(h, m, 'XOF'), { available: '20000', reserved: '0' }, 'nothing held');
  t.same((await on(m, 'GET', '/operators')).body.data.find((o: any) => o.operator_code === 'BJ_MOOV_MOMO').availability, { payin: 'operational', payout: 'closed' });

  const reopened = await request(second.url!, 'PUT', '/admin/operators/BJ_MOOV_MOMO/availability', {
    body: { payout: 'operational' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  t.equal(reopened.status, 200, 'reopened through the second process');
  t.equal((await quote(h, m, 'payout', leg('BJ_MOOV_MOMO', 'BJ', 'XOF', '5000'))).operator_availability, 'operational', 'the first sees it');
  t.equal((await payout()).status, 201, 'and the second accepts the kept quote');
});

t.test('the finance audit passes with operator streams and refused payments in the history', async (t) => {
  const audit = await h.admin('POST', '/admin/audit');
  t.equal(audit.status, 200);
  t.equal(audit.body.ok, true, JSON.stringify(audit.body.discrepancies ?? audit.body).slice(0, 500));
});
