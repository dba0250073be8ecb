// Transfer webhooks really delivered to a merchant's receiver (seed "Events", CONTRACT.md §5, §7):
// each event of the seed's table once, signed, in the transfer's order at the receiver; the snapshot
// (`data.object`) is the transfer at that event, with its metadata and never an OTP.
import t, { type Test } from 'tap';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, configureWebhook, eventsOf, until, type Receiver } from './helpers/webhooks.ts';
import {
  createTransfer, recipientSN, settledTransfer, transferMerchant, walletsOf, type TransferMerchant,
} from './helpers/transfers.ts';
import { verifyWebhook, type WebhookEvent } from '../webhook-verifier/index.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => h.stop());

let rx: Receiver;
let m: TransferMerchant;
let secret: string;
t.before(async () => {
  rx = await startReceiver();
  m = await transferMerchant(h);
  secret = await configureWebhook(h, m, rx.url);
});
t.teardown(() => rx.close());

type Transfer = Record<string, any>;

/** The deliveries about one transfer, verified, in the order the receiver got them. */
const deliveriesOf = (id: string) => rx.deliveries
  .map((d) => ({ d, ev: verifyWebhook<Transfer>(d.body, d.headers, secret) }))
  .filter((x) => x.ev.data.id === id);

/** Waits until the receiver holds `n` deliveries about the transfer and every one is acknowledged. */
async function received(id: string, n: number): Promise<Array<{ d: (typeof rx.deliveries)[number]; ev: WebhookEvent<Transfer> }>> {
  await until(async () => {
    const listed = await eventsOf(h, m, id);
    return listed.length === n && listed.every((e) => e.delivery_status === 'delivered');
  }, `${n} delivered events for transfer ${id}`);
  return deliveriesOf(id);
}

/** Every snapshot carries the merchant's metadata and no OTP anywhere. */
function checkSnapshots(t: Test, got: Array<{ d: { body: string; headers: Record<string, unknown> }; ev: WebhookEvent<Transfer> }>, metadata: Record<string, string>, otp?: string) {
  for (const { d, ev } of got) {
    t.equal(d.headers['x-service-event'], ev.event, `${ev.event}: header names the event`);
    t.equal(d.headers['x-service-webhook-id'], ev.id);
    t.equal(ev.data.type, 'transfer');
    t.same(ev.data.object.metadata, metadata, `${ev.event}: snapshot carries the metadata`);
    t.notOk(/"otp"\s*:/.test(d.body), `${ev.event}: no otp field`);
    if (otp) t.notOk(d.body.includes(otp), `${ev.event}: the OTP value is nowhere in the body`);
  }
  t.equal(new Set(got.map((x) => x.ev.id)).size, got.length, 'each event delivered once');
}

t.test('happy path: payin.completed → payout.completed → completed, each snapshot the transfer at that moment', async (t) => {
  const created = await createTransfer(h, m, {
    payer: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_ORANGE_MOMO', phone: '+221770000011' },
    quoteBody: { payer_operator_code: 'SN_ORANGE_MOMO', payin_currency: 'XOF' },
    extra: { otp: '715942', metadata: { order: 'W-1', channel: 'app' } },
  });
  const done = await settledTransfer(h, m, created.id, 'completed');
  const got = await received(created.id, 3);
  t.same(got.map((x) => x.ev.event), ['transfer.payin.completed', 'transfer.payout.completed', 'transfer.completed'], 'the seed\'s order at the receiver');
  t.ok(got[0]!.d.n < got[1]!.d.n && got[1]!.d.n < got[2]!.d.n, 'delivered one after the other');
  checkSnapshots(t, got, { order: 'W-1', channel: 'app' }, '715942');
  const [payin, payout, completed] = got.map((x) => x.ev.data.object);
  t.match(payin, { id: created.id, merchant_id: m.merchantId, status: 'disbursing', payin_status: 'completed', payout_status: 'pending', collection_completed_at: String });
  t.ok(payin!.collection_reference, 'the collection reference at payin.completed');
  t.match(payout, { payin_status: 'completed', payout_status: 'completed', disbursement_completed_at: String });
  t.ok(payout!.disbursement_reference);
  t.same(completed, done, 'transfer.completed carries the transfer as GET /transfers/{id} shows it');
  const store = (await h.app.services.store.readStream(`transfer-${created.id}`)).filter((e) => e.type.startsWith('transfer.') && got.some((x) => x.ev.event === e.type));
  t.same(got.map((x) => x.ev.id), store.map((e) => e.id), 'the webhook ids are the domain event ids');
});

t.test('collection fails: payin.failed then failed; payout_status stays not_started', async (t) => {
  const created = await createTransfer(h, m, {
    payer: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000099' },
    extra: { metadata: { order: 'W-2' } },
  });
  const done = await settledTransfer(h, m, created.id, 'failed');
  const got = await received(created.id, 2);
  t.same(got.map((x) => x.ev.event), ['transfer.payin.failed', 'transfer.failed']);
  checkSnapshots(t, got, { order: 'W-2' });
  const [payinFailed, failed] = got.map((x) => x.ev.data.object);
  const insufficient = { failure_reason: 'insufficient_funds', provider_failure: { provider: 'sandbox', code: 'INSUFFICIENT_FUNDS', message: String } };
  t.match(payinFailed, { payin_status: 'failed', payout_status: 'not_started', execution: { collection: { ...insufficient, failed_at: String } } });
  t.match(failed, { status: 'failed', payin_status: 'failed', payout_status: 'not_started', ...insufficient });
  t.same(failed!.execution.disbursements, [], 'no disbursement was ever started');
  t.same(failed, done);
});

t.test('disbursement fails, then a relaunch completes: every leg event once, in order, for the new attempt', async (t) => {
  const before = await walletsOf(h, m);
  const created = await createTransfer(h, m, { recipient: recipientSN('+221770000099'), extra: { metadata: { order: 'W-3' } } });
  const failed = await settledTransfer(h, m, created.id, 'failed');
  const first = await received(created.id, 3);
  t.same(first.map((x) => x.ev.event), ['transfer.payin.completed', 'transfer.payout.failed', 'transfer.failed']);
  checkSnapshots(t, first, { order: 'W-3' });
  const [, payoutFailed, transferFailed] = first.map((x) => x.ev.data.object);
  t.match(payoutFailed, { payin_status: 'completed', payout_status: 'failed', disbursement_failed_at: String });
  const notFound = { failure_reason: 'account_not_found', provider_failure: { provider: 'sandbox', code: 'RECIPIENT_NOT_FOUND', message: String } };
  t.match(payoutFailed!.execution.disbursements, [{ attempt: 1, status: 'failed', ...notFound }]);
  t.match(transferFailed, { status: 'failed', payin_status: 'completed', payout_status: 'failed', ...notFound });
  t.same(transferFailed, failed);
  const after = await walletsOf(h, m);
  t.equal(after.XOF!.reserved, before.XOF!.reserved, 'the reservation was released');
  t.equal(after.XOF!.available, before.XOF!.available, 'back to available in full');

  const relaunch = await h.as(m, 'POST', `/transfers/${created.id}/relaunch-payout`, { recipient: recipientSN('+221770000004') }, { idem: true });
  t.equal(relaunch.status, 200, relaunch.text);
  const done = await settledTransfer(h, m, created.id, 'completed');
  const all = await received(created.id, 5);
  t.same(all.map((x) => x.ev.event), [
    'transfer.payin.completed', 'transfer.payout.failed', 'transfer.failed', 'transfer.payout.completed', 'transfer.completed',
  ], 'the first attempt\'s events are not sent again; the new attempt\'s follow');
  checkSnapshots(t, all, { order: 'W-3' });
  const [payoutCompleted, completed] = all.slice(3).map((x) => x.ev.data.object);
  t.match(payoutCompleted, { payout_status: 'completed', recipient: { phone: '+221770000004' } });
  t.match(payoutCompleted!.execution.disbursements, [{ attempt: 1, status: 'failed' }, { attempt: 2, status: 'completed', completed_at: String }]);
  t.equal(payoutCompleted!.disbursement_reference, payoutCompleted!.execution.disbursements[1].provider_reference, 'the new attempt\'s provider reference');
  t.not(payoutCompleted!.disbursement_reference, payoutFailed!.disbursement_reference);
  t.equal(payoutCompleted!.disbursement_failed_at, null, 'the new attempt has not failed');
  t.match(completed, { status: 'completed', payin_status: 'completed', payout_status: 'completed' });
  t.same(completed, done);
});
