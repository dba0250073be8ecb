// Real payins and payouts through the sandbox provider: each terminal state sends exactly one signed
// webhook (payin.completed, payin.failed, payout.completed, payout.failed) whose snapshot is the
// resource's API JSON at that moment, with metadata, never the OTP; a payment that stays pending
// sends none.
import t from 'tap';
import { startTestApp, caughtUp, type MerchantCreds } from './helpers/app.ts';
import { newCustomer, quote, leg, topUp, party, settled } from './helpers/money.ts';
import { startReceiver, until, configureWebhook, eventsOf, deliveriesIdle, type Receiver } from './helpers/webhooks.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '50' } });
t.teardown(() => h.stop());

let rx: Receiver;
let m: MerchantCreds;
let secret: string;
let customer: string;
t.before(async () => {
  rx = await startReceiver();
  m = await h.newMerchant('Payments');
  secret = await configureWebhook(h, m, rx.url);
  customer = await newCustomer(h, m);
});
t.teardown(() => rx.close());

async function payin(operator: string, country: string, currency: string, phone: string, extra: Record<string, unknown> = {}): Promise<string> {
  const q = await quote(h, m, 'payin', leg(operator, country, currency, '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party(country, operator, phone), ...extra }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  return p.body.id;
}

async function payout(phone: string): Promise<string> {
  const q = await quote(h, m, 'payout', leg('CM_MTN_MOMO', 'CM', 'XAF', '10000'));
  const p = await h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: customer, payment_reason_text: 'Salary',
    recipient: { ...party('CM', 'CM_MTN_MOMO', phone), recipient_type: 'individual', first_name: 'Kofi', last_name: 'Test' },
    metadata: { batch: 'B-7' },
  }, { idem: true });
  if (p.status !== 201) throw new Error(`payout failed: ${p.status} ${p.text}`);
  return p.body.id;
}

/** The deliveries about one resource, verified. */
const deliveriesOf = (id: string) => rx.deliveries
  .map((d) => ({ d, ev: verifyWebhook(d.body, d.headers, secret) }))
  .filter((x) => x.ev.data.id === id);

t.test('payin.completed and payin.failed: one signed event each, the snapshot is the payin at that moment', async (t) => {
  const ok = await payin('CM_MTN_MOMO', 'CM', 'XAF', '+237670000001', { metadata: { order: 'A-42' } });
  const ko = await payin('CM_MTN_MOMO', 'CM', 'XAF', '+237670000099');
  const okState = await settled(h, m, 'payins', ok, 'completed');
  const koState = await settled(h, m, 'payins', ko, 'failed');
  const [a] = await until(() => deliveriesOf(ok).length === 1 && deliveriesOf(ok), 'payin.completed');
  const [b] = await until(() => deliveriesOf(ko).length === 1 && deliveriesOf(ko), 'payin.failed');
  t.equal(a!.ev.event, 'payin.completed');
  t.equal(a!.d.headers['x-service-event'], 'payin.completed');
  t.equal(a!.ev.data.type, 'payin');
  t.same(a!.ev.data.object, okState, 'the snapshot is the payin as GET /payins/{id} shows it');
  t.match(a!.ev.data.object, { id: ok, merchant_id: m.merchantId, status: 'completed', metadata: { order: 'A-42' } });
  t.equal(b!.ev.event, 'payin.failed');
  t.same(b!.ev.data.object, koState);
  t.match(b!.ev.data.object, { status: 'failed' });

  const store = h.app.services.store;
  const completedEvent = (await store.readStream(`payin-${ok}`)).find((e) => e.type === 'payin.completed')!;
  t.equal(a!.ev.id, completedEvent.id, 'the webhook id is the domain event id');
  const listed = await eventsOf(h, m, ok);
  t.equal(listed.length, 1);
  t.match(listed[0], { id: completedEvent.id, event: 'payin.completed', delivery_status: 'delivered' });
  await caughtUp(h);
  await deliveriesIdle(h);
  t.equal(deliveriesOf(ok).length, 1, 'exactly one delivery');
  t.equal(deliveriesOf(ko).length, 1);
});

t.test('an OTP given on a payin is never in its webhook', async (t) => {
  const id = await payin('SN_ORANGE_MOMO', 'SN', 'XOF', '+221770000001', { otp: '482913' });
  await settled(h, m, 'payins', id, 'completed');
  const [x] = await until(() => deliveriesOf(id).length === 1 && deliveriesOf(id), 'the payin webhook');
  t.equal(x!.ev.event, 'payin.completed');
  t.notOk(x!.d.body.includes('482913'), 'the OTP value is nowhere in the body');
  t.notOk(/"otp"\s*:/.test(x!.d.body), 'no otp field');
});

t.test('payout.completed and payout.failed', async (t) => {
  await topUp(h, m, 'XAF', '100000');
  const ok = await payout('+237670000002');
  const ko = await payout('+237670000099');
  const okState = await settled(h, m, 'payouts', ok, 'completed');
  const koState = await settled(h, m, 'payouts', ko, 'failed');
  const [a] = await until(() => deliveriesOf(ok).length === 1 && deliveriesOf(ok), 'payout.completed');
  const [b] = await until(() => deliveriesOf(ko).length === 1 && deliveriesOf(ko), 'payout.failed');
  t.equal(a!.ev.event, 'payout.completed');
  t.equal(a!.ev.data.type, 'payout');
  t.same(a!.ev.data.object, okState);
  t.match(a!.ev.data.object, { id: ok, merchant_id: m.merchantId, status: 'completed', metadata: { batch: 'B-7' } });
  t.equal(b!.ev.event, 'payout.failed');
  t.same(b!.ev.data.object, koState);
});

t.test('a payment that stays pending sends nothing; GET /events filters by type and event', async (t) => {
  const stuck = await payin('CM_MTN_MOMO', 'CM', 'XAF', '+237670000098');
  await until(async () => (await h.as(m, 'GET', `/payins/${stuck}`)).body.provider_reference, 'the stuck payin submitted');
  await caughtUp(h);
  await deliveriesIdle(h);
  t.equal(deliveriesOf(stuck).length, 0, 'not a terminal state: no webhook');
  t.same(await eventsOf(h, m, stuck), []);
  const payins = await h.as(m, 'GET', '/events?type=payin&limit=100');
  t.same(new Set(payins.body.data.map((e: any) => e.event)), new Set(['payin.completed', 'payin.failed']));
  const payoutFailed = await h.as(m, 'GET', '/events?event=payout.failed');
  t.equal(payoutFailed.body.data.length, 1);
  t.equal(payoutFailed.body.data[0].data.type, 'payout');
});
