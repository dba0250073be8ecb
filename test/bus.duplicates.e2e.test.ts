// Duplicate and reordered delivery (issue 9 point 3): the whole service runs on a bus that hands
// every message to each consumer two or three times and releases first deliveries shuffled (see
// helpers/duplicating-bus.ts), around the real bus of the run (in-process, or NATS JetStream when
// NATS_URL is set). Payins, payouts and transfers (one disbursement failing, then relaunched) run
// to their end with webhooks on, and provider callbacks are replayed and sent out of order. Then:
// one collection per payin and transfer, one disbursement per payout and per attempt, no domain
// event twice in any stream, wallets exactly as expected, one delivery per webhook event id, the
// finance audit clean.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startTestApp, request, type MerchantCreds } from './helpers/app.ts';
import { dbLabel } from './helpers/db.ts';
import { DuplicatingBus } from './helpers/duplicating-bus.ts';
import { leg, party, quote, settled, topUp } from './helpers/money.ts';
import { transferMerchant, transferQuote, payerCM, recipientSN, settledTransfer, walletsOf, waitFor, type TransferMerchant } from './helpers/transfers.ts';
import { startReceiver, configureWebhook, deliveriesIdle } from './helpers/webhooks.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { NatsBus } from '../infra/bus/nats.ts';
import type { Bus } from '../infra/bus/types.ts';
import { providers } from '../infra/providers/index.ts';
import { signedText } from '../infra/providers/sandbox.ts';

const seed = Number(process.env.DUP_SEED ?? 20240917);
const natsUrl = process.env.NATS_URL || undefined;
const natsPrefix = `tdup${randomBytes(4).toString('hex')}`;
const inner: Bus = natsUrl ? await NatsBus.connect({ url: natsUrl, prefix: natsPrefix, ackWaitMs: 30_000 }) : new MemoryBus();
const bus = new DuplicatingBus(inner, seed);
t.comment(`duplicating bus around ${inner.name}, seed ${seed} (DUP_SEED to replay) on ${dbLabel}`);

const h = await startTestApp({ bus });
const rx = await startReceiver();
t.teardown(async () => {
  await bus.drain();
  await h.stop();
  await rx.close();
  if (natsUrl) {
    const nc = await connect({ servers: natsUrl });
    await (await jetstreamManager(nc)).streams.delete(`${natsPrefix}_bus`).catch(() => false);
    await nc.close();
  }
});
const s = h.app.services;

const recipient = (phone: string) => ({ ...party('SN', 'SN_WAVE_MOMO', phone), recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' });

async function payin(m: TransferMerchant, phone: string) {
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: m.customerId, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin ${p.status} ${p.text}`);
  return { id: p.body.id as string, receive: BigInt(q.receive_amount) };
}

async function payout(m: TransferMerchant, phone: string) {
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '2000'));
  const p = await h.as(m, 'POST', '/payouts', { quote_id: q.id, customer_id: m.customerId, payment_reason_text: 'dup', recipient: recipient(phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payout ${p.status} ${p.text}`);
  return { id: p.body.id as string, send: BigInt(q.send_amount) };
}

async function transfer(m: TransferMerchant, recipientPhone: string) {
  const q = await transferQuote(h, m);
  const r = await h.as(m, 'POST', '/transfers', { quote_id: q.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN(recipientPhone) }, { idem: true });
  if (r.status !== 201) throw new Error(`transfer ${r.status} ${r.text}`);
  return { id: r.body.id as string, credit: BigInt(q.payin_amount) - BigInt(q.total_fee), debit: BigInt(q.payout_amount) };
}

const postCallback = (cb: { body: unknown; headers: Record<string, string> }) =>
  request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb.body, headers: cb.headers });

/**
 * Signed callbacks for a leg stuck at the provider: a `failed` one and a `completed` one. The leg
 * settles to `final` at the provider (what its status checks answer); the other contradicts it.
 */
async function contradictoryCallbacks(reference: string, final: 'completed' | 'failed') {
  const sandbox = providers(s).sandbox;
  await waitFor(`leg ${reference} at the provider`, async () => (await s.knex('sandbox_provider_legs').where({ reference }).first()) !== undefined);
  const truth = (await sandbox.callbackFor(reference, final === 'failed' ? { state: 'failed', reason: 'DECLINED' } : { state: 'completed' }))!;
  // The contradiction, signed like the operator would: the leg itself never leaves its final state.
  const body = { ...truth.body, status: final === 'completed' ? 'failed' : 'completed', reason: final === 'completed' ? 'CONTRADICTION' : null } as Parameters<typeof signedText>[0];
  const contradiction = { body, headers: Object.fromEntries(Object.keys(truth.headers).map((k) => [k, s.secrets.hash(signedText(body))])) };
  return final === 'completed' ? { completed: truth, failed: contradiction } : { failed: truth, completed: contradiction };
}

let m: TransferMerchant;
const expected = { XAF: 0n, XOF: 100_000n };
const payins: Array<{ id: string; status: string }> = [];
const payouts: Array<{ id: string; status: string }> = [];
const transfers: Array<{ id: string; status: string; attempts: number }> = [];

t.before(async () => {
  m = await transferMerchant(h, { topUp: { XOF: '100000' } });
  await configureWebhook(h, m, rx.url);
});

t.test('payins, payouts and transfers settle once under duplicated, shuffled delivery', async (t) => {
  const [pOk1, pOk2, pOk3, pFail] = await Promise.all([
    payin(m, '+237670000001'), payin(m, '+237670000002'), payin(m, '+237670000003'), payin(m, '+237670000099'),
  ]);
  const [oOk1, oOk2, oFail] = await Promise.all([payout(m, '+221770000001'), payout(m, '+221770000002'), payout(m, '+221770000099')]);
  const [tOk1, tOk2, tRelaunch] = await Promise.all([transfer(m, '+221770000001'), transfer(m, '+221770000002'), transfer(m, '+221770000099')]);

  for (const p of [pOk1!, pOk2!, pOk3!]) {
    t.equal((await settled(h, m, 'payins', p.id)).status, 'completed');
    expected.XAF += p.receive;
    payins.push({ id: p.id, status: 'completed' });
  }
  t.equal((await settled(h, m, 'payins', pFail!.id)).status, 'failed');
  payins.push({ id: pFail!.id, status: 'failed' });
  for (const o of [oOk1!, oOk2!]) {
    t.equal((await settled(h, m, 'payouts', o.id)).status, 'completed');
    expected.XOF -= o.send;
    payouts.push({ id: o.id, status: 'completed' });
  }
  t.equal((await settled(h, m, 'payouts', oFail!.id)).status, 'failed');
  payouts.push({ id: oFail!.id, status: 'failed' });
  for (const x of [tOk1!, tOk2!]) {
    t.equal((await settledTransfer(h, m, x.id)).status, 'completed');
    expected.XAF += x.credit;
    expected.XOF -= x.debit;
    transfers.push({ id: x.id, status: 'completed', attempts: 1 });
  }
  // The failing disbursement, relaunched to a good recipient: collected once, disbursed by attempt 2.
  t.match(await settledTransfer(h, m, tRelaunch!.id), { status: 'failed', payin_status: 'completed', payout_status: 'failed' });
  const relaunch = await h.as(m, 'POST', `/transfers/${tRelaunch!.id}/relaunch-payout`, { recipient: recipientSN('+221770000003') }, { idem: true });
  t.equal(relaunch.status, 200, relaunch.text);
  t.equal((await settledTransfer(h, m, tRelaunch!.id, 'completed')).status, 'completed');
  expected.XAF += tRelaunch!.credit;
  expected.XOF -= tRelaunch!.debit;
  transfers.push({ id: tRelaunch!.id, status: 'completed', attempts: 2 });
});

t.test('provider callbacks replayed and out of order: no double effect, no state regression', async (t) => {
  // A payin whose leg stays pending: completed ×3 at once, a contradicting failed ×2, completed again.
  const p = await payin(m, '+237670000098');
  const pcb = await contradictoryCallbacks(p.id, 'completed');
  const first = await Promise.all([postCallback(pcb.completed), postCallback(pcb.completed), postCallback(pcb.completed)]);
  t.same(first.map((r) => r.status), [200, 200, 200]);
  t.equal((await settled(h, m, 'payins', p.id)).status, 'completed');
  // Accepted (the signature is good: the contradiction is not refused as forged) and ignored.
  for (const cb of [pcb.failed, pcb.failed, pcb.completed]) t.equal((await postCallback(cb)).status, 200, 'a late or repeated callback is received');
  t.equal((await h.as(m, 'GET', `/payins/${p.id}`)).body.status, 'completed', 'a failed after completed does not regress it');
  expected.XAF += p.receive;
  payins.push({ id: p.id, status: 'completed' });

  // A payout: failed first (the hold is released), then a contradicting completed ×2 and failed again.
  const o = await payout(m, '+221770000098');
  const ocb = await contradictoryCallbacks(o.id, 'failed');
  const fails = await Promise.all([postCallback(ocb.failed), postCallback(ocb.failed)]);
  t.same(fails.map((r) => r.status), [200, 200]);
  t.equal((await settled(h, m, 'payouts', o.id)).status, 'failed');
  for (const cb of [ocb.completed, ocb.completed, ocb.failed]) t.equal((await postCallback(cb)).status, 200);
  t.equal((await h.as(m, 'GET', `/payouts/${o.id}`)).body.status, 'failed', 'a completed after failed does not regress it');
  payouts.push({ id: o.id, status: 'failed' });
});

t.test('no effect applied twice', async (t) => {
  await bus.drain();
  // Effects still on their way (webhook deliveries) have settled: every recorded event delivered.
  const webhookRows = await waitFor('every webhook delivered', async () => {
    const rows = await s.knex('webhook_events').where({ merchant_id: m.merchantId }).select('id', 'stream_id', 'stream_version', 'event', 'delivery_status');
    return rows.length > 0 && rows.every((r: any) => r.delivery_status === 'delivered') && rows;
  });
  await deliveriesIdle(h); // no attempt due or under way: a late duplicate delivery would be one
  await bus.drain();

  for (const p of payins) t.equal((await h.as(m, 'GET', `/payins/${p.id}`)).body.status, p.status, `payin ${p.status}`);
  for (const o of payouts) t.equal((await h.as(m, 'GET', `/payouts/${o.id}`)).body.status, o.status, `payout ${o.status}`);
  for (const x of transfers) t.equal((await h.as(m, 'GET', `/transfers/${x.id}`)).body.status, x.status, `transfer ${x.status}`);

  // The provider's own books: one collection per payin and transfer, one disbursement per payout and attempt.
  const legs = await s.knex('sandbox_provider_legs').select('reference', 'kind');
  const count = (ref: string) => legs.filter((l: any) => l.reference === ref).length;
  let twice = 0;
  for (const p of payins) twice += count(p.id) === 1 ? 0 : 1;
  for (const o of payouts) twice += count(o.id) === 1 ? 0 : 1;
  for (const x of transfers) {
    const mine = legs.filter((l: any) => l.reference.startsWith(`transfer:${x.id}:`));
    t.equal(mine.filter((l: any) => l.kind === 'collection').length, 1, 'one collection per transfer');
    t.equal(mine.filter((l: any) => l.kind === 'disbursement').length, x.attempts, 'one disbursement per attempt');
    if (mine.length !== 1 + x.attempts) twice++;
  }
  t.equal(twice, 0, 'no leg started twice at the provider');

  // The event store: no domain event twice in one stream (per attempt for transfers).
  const streamIds = [...payins.map((p) => `payin-${p.id}`), ...payouts.map((o) => `payout-${o.id}`), ...transfers.map((x) => `transfer-${x.id}`)];
  let repeated = 0;
  for (const id of streamIds) {
    const events = await s.store.readStream(id);
    t.ok(events.length > 0, `${id} exists`);
    const keys = events.map((e) => `${e.type}#${(e.data as { attempt?: number }).attempt ?? ''}`);
    const dup = keys.filter((k, i) => keys.indexOf(k) !== i);
    t.same(dup, [], `${id}: no event twice`);
    repeated += dup.length;
  }

  const wallets = await walletsOf(h, m);
  t.same(wallets.XAF, { ...wallets.XAF, available: expected.XAF.toString(), reserved: '0' }, 'XAF exactly as expected');
  t.same(wallets.XOF, { ...wallets.XOF, available: expected.XOF.toString(), reserved: '0' }, 'XOF exactly as expected');

  // Webhooks: one per terminal domain event, each delivered once (the receiver always answers 200).
  const byId = new Map<string, number>();
  for (const d of rx.deliveries) {
    const id = String(d.headers['x-service-webhook-id']);
    byId.set(id, (byId.get(id) ?? 0) + 1);
  }
  t.same([...byId.keys()].sort(), webhookRows.map((r: any) => r.id).sort(), 'every recorded event delivered, nothing else');
  const deliveredTwice = [...byId.values()].filter((n) => n > 1).length;
  t.equal(deliveredTwice, 0, 'one delivery per event id');

  const audit = await h.admin('POST', '/admin/audit');
  t.equal(audit.status, 200);
  t.equal(audit.body.ok, true, 'the finance audit finds nothing');

  t.ok(bus.stats.duplicates >= bus.stats.delivered / 2, 'duplicates were injected');
  t.comment(`duplicate delivery: ${bus.stats.delivered} messages delivered, ${bus.stats.duplicates} duplicates injected, ${bus.stats.reordered} windows reordered, ` +
    `${webhookRows.length} webhooks, ${rx.deliveries.length} deliveries; effects applied twice = ${twice + repeated + deliveredTwice}`);
});
