// What else knows refunds (CONTRACT §9, issue 33 point 1): the webhooks refund.completed and
// refund.failed (signed, data.type `refund`, the snapshot as GET /refunds/{id} shows it), the finance
// audit after refunds, a rebuild that reproduces the refunds read model and the payins' refund
// fields, and the metrics (refund legs, the refunds projection).
import t from 'tap';
import { startTestApp, caughtUp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until } from './helpers/money.ts';
import { startReceiver, configureWebhook, deliveriesIdle } from './helpers/webhooks.ts';
import { parseMetrics, series } from './helpers/finance.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { projections } from '../app/registry.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;
const rx = await startReceiver();
t.teardown(() => rx.close());
const m = await h.newMerchant('Refunding');
const secret = await configureWebhook(h, m, rx.url);
await topUp(h, m, 'XAF', '10000');
const customer = await newCustomer(h, m);

async function completedPayin(): Promise<string> {
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  await settled(h, m, 'payins', p.body.id, 'completed');
  return p.body.id;
}
const refundSettled = (id: string) => until(`refund ${id}`, async () => {
  const r = await h.as(m, 'GET', `/refunds/${id}`);
  return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
});
const deliveriesOf = (id: string) => rx.deliveries.map((d) => ({ d, ev: verifyWebhook(d.body, d.headers, secret) })).filter((x) => x.ev.data.id === id);

const payinId = await completedPayin();
const ok = (await h.as(m, 'POST', '/refunds', { payin_id: payinId, amount: '2000', metadata: { ticket: 'T-9' } }, { idem: true })).body;
const ko = (await h.as(m, 'POST', '/refunds', { payin_id: payinId, amount: '1099' }, { idem: true })).body;
const okState = await refundSettled(ok.id);
const koState = await refundSettled(ko.id);

t.test('refund.completed and refund.failed: one signed event each, data.type refund, the refund at that moment', async (t) => {
  t.equal(okState.status, 'completed');
  t.equal(koState.status, 'failed');
  const [a] = await until('refund.completed delivered', async () => deliveriesOf(ok.id).length === 1 && deliveriesOf(ok.id));
  const [b] = await until('refund.failed delivered', async () => deliveriesOf(ko.id).length === 1 && deliveriesOf(ko.id));
  t.equal(a!.ev.event, 'refund.completed');
  t.equal(a!.d.headers['x-service-event'], 'refund.completed');
  t.equal(a!.ev.data.type, 'refund');
  t.same(a!.ev.data.object, okState, 'the snapshot is the refund as GET /refunds/{id} shows it');
  t.equal(b!.ev.event, 'refund.failed');
  t.match(b!.ev.data.object, { id: ko.id, status: 'failed', amount: '1099' });
  const events = await h.as(m, 'GET', `/events?resource_id=${ok.id}`);
  t.match(events.body.data, [{ event: 'refund.completed', data: { type: 'refund', id: ok.id } }], 'listed at GET /events');
  await caughtUp(h);
  await deliveriesIdle(h);
  t.equal(deliveriesOf(ok.id).length + deliveriesOf(ko.id).length, 2, 'once each');
});

t.test('the merchant statement shows each refund\'s hold, then its payment or release, and reconciles', async (t) => {
  const r = await h.as(m, 'GET', '/statements?currency=XAF');
  t.equal(r.status, 200, r.text);
  t.equal(r.body.reconciled, true);
  const lines = (id: string) => r.body.lines.filter((l: any) => l.reference_type === 'refund' && l.reference_id === id)
    .map((l: any) => [l.movement, l.available_delta, l.reserved_delta, l.fee, l.counterparty]);
  t.same(lines(ok.id), [['hold', '-2000', '2000', '0', `merchant:${m.merchantId}:reserved`], ['post', '0', '-2000', '0', 'provider:CM_MTN_MOMO']]);
  t.same(lines(ko.id), [['hold', '-1099', '1099', '0', `merchant:${m.merchantId}:reserved`], ['release', '1099', '-1099', '0', `merchant:${m.merchantId}:available`]]);
  t.match(r.body.lines.find((l: any) => l.reference_id === ok.id && l.movement === 'post').description, /refund/);
});

t.test('the finance audit passes after refunds, and checks them', async (t) => {
  const r = await h.admin('POST', '/admin/audit');
  t.equal(r.status, 200);
  t.equal(r.body.ok, true);
  t.same(r.body.ledger.findings, []);
  t.equal(r.body.ledger.summary.refunds, 2, 'the refunds counted');
  const refunds = r.body.read_models.find((p: any) => p.projection === 'refunds');
  t.match(refunds, { ok: true, tables: [{ table: 'refunds', live_rows: 2, fresh_rows: 2 }] }, 'the refunds read model matches a fresh fold');
  // The audit would catch a refund whose money moved twice: forge a second post of its hold.
  const wallet = `wallet-${m.merchantId}-XAF`;
  const tail = await s.store.readStream(wallet, 1);
  const posted = tail.find((e) => e.type === 'wallet.hold_posted' && (e.data as any).hold_id === ok.id)!;
  await s.store.append([{ streamId: wallet, expectedVersion: tail.length, events: [{ type: posted.type, data: posted.data, metadata: {} }] }]);
  const forged = await h.admin('POST', '/admin/audit');
  t.equal(forged.body.ok, false, 'a refund posted twice fails the audit');
  t.ok(forged.body.ledger.findings.some((f: any) => f.check === 'movement_once' && f.message.includes(ok.id)), 'named as a movement made twice');
});

t.test('a rebuild reproduces the refunds read model and the payins\' refund fields', async (t) => {
  const before = await s.knex('refunds').orderBy('id').select('id', 'status', 'payin_id', 'version', 'body');
  const payinBefore = (await s.knex('payins').where({ id: payinId }).first('body')).body;
  t.match(payinBefore, { refunded_amount: '2000', refund_ids: [ok.id, ko.id] });
  await s.knex('refunds').update({ body: s.knex.raw(`jsonb_set(body, '{status}', '"pending"')`) });
  for (const p of projections.filter((x) => x.name === 'refunds' || x.name === 'money')) await rebuildProjection(s.knex, s.store, p);
  t.same(await s.knex('refunds').orderBy('id').select('id', 'status', 'payin_id', 'version', 'body'), before, 'refunds rebuilt identical');
  t.same((await s.knex('payins').where({ id: payinId }).first('body')).body, payinBefore, 'the payin rebuilt with its refunds');
});

t.test('metrics: refund legs by kind, the refunds projection', async (t) => {
  const r = await h.admin('GET', '/metrics');
  t.equal(r.status, 200);
  const metrics = parseMetrics(r.text);
  t.ok((metrics.get(series('provider_leg_settle_seconds_count', { provider: 'sandbox', kind: 'refund', outcome: 'completed' })) ?? 0) >= 1, 'refund legs settled, completed');
  t.ok((metrics.get(series('provider_leg_settle_seconds_count', { provider: 'sandbox', kind: 'refund', outcome: 'failed' })) ?? 0) >= 1, 'and failed');
  t.ok(metrics.has(series('projection_lag_events', { projection: 'refunds' })), 'the refunds projection\'s lag');
});
