// The transfer aggregate, as given/when/then specifications.
import t from 'tap';
import * as T from '../domain/transfer.ts';
import { spec } from './helpers/spec.ts';

const at = '2026-06-01T10:00:00.000Z';
const id = '11111111-1111-4111-8111-111111111111';
const created: T.TransferCreated = {
  transfer_id: id, merchant_id: 'm', customer_id: 'c', quote_id: 'q',
  payin_amount: '10204', payin_currency: 'XAF', payout_amount: '10000', payout_currency: 'XOF', total_fee: '204',
  corridor_code: 'CM-SN-XAF-XOF', corridor_type: 'cross_border', payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO',
  payer: { country_code: 'CM', rail_type: 'mobile_money', phone: '+237670000001', operator_code: 'CM_MTN_MOMO' },
  recipient: { country_code: 'SN', rail_type: 'mobile_money', phone: '+221770000001', operator_code: 'SN_WAVE_MOMO', recipient_type: 'individual' },
  pricing: {}, wallet_impact: null, payment_reason_code: null, sender_source_of_funds: null, sender_occupation: null, metadata: {}, otp_required: false, at,
};
const ev = <K extends T.TransferEvent['type']>(type: K, data: Extract<T.TransferEvent, { type: K }>['data']) => ({ type, data }) as T.TransferEvent;
const given = (events: T.TransferEvent[]) => spec(T.transferDecider).given(events);

const createdE = ev('transfer.created', created);
const collecting = ev('transfer.collection_started', { leg_reference: T.collectionReference(id), operator_code: 'CM_MTN_MOMO', phone: '+237670000001', amount: '10204', currency: 'XAF', otp: false, at });
const payinDone = ev('transfer.payin.completed', { provider_reference: 'SBX-1', at });
const payout1 = ev('transfer.payout.started', { attempt: 1, leg_reference: T.payoutReference(id, 1), amount: '10000', currency: 'XOF', recipient: created.recipient, at });
const payout1Failed = ev('transfer.payout.failed', { attempt: 1, reason: 'RECIPIENT_NOT_FOUND', at });
const failed = ev('transfer.failed', { reason: 'RECIPIENT_NOT_FOUND', at });

t.test('create → pending, both legs not started', async (t) => {
  const s = given([createdE]).state;
  t.match(s, { status: 'pending', payin_status: 'not_started', payout_status: 'not_started' });
  given([createdE]).when((s) => T.create(s, created)).then(t, [], 'a retried create decides nothing');
});

t.test('the collection starts once', async (t) => {
  given([createdE]).when((s) => T.startCollection(s, { at })).then(t, [collecting]);
  given([createdE, collecting]).when((s) => T.startCollection(s, { at })).then(t, [], 'redelivered trigger: nothing');
  t.match(given([createdE, collecting]).state, { status: 'collecting', payin_status: 'pending', payout_status: 'not_started' });
});

t.test('the collection takes the OTP whenever one was supplied, required or not (issue 28)', async (t) => {
  const withOtp = (data: Partial<T.TransferCreated>) => ev('transfer.created', { ...created, ...data });
  const started = (otp: boolean) => ev('transfer.collection_started', { ...(collecting.data as object), otp } as Extract<T.TransferEvent, { type: 'transfer.collection_started' }>['data']);
  given([withOtp({ otp_required: false, otp_supplied: true })]).when((s) => T.startCollection(s, { at })).then(t, [started(true)], 'supplied where none is needed: sent');
  given([withOtp({ otp_required: true, otp_supplied: true })]).when((s) => T.startCollection(s, { at })).then(t, [started(true)], 'required and supplied: sent');
  given([withOtp({ otp_required: false, otp_supplied: false })]).when((s) => T.startCollection(s, { at })).then(t, [started(false)], 'none supplied: none sent');
  given([withOtp({ otp_required: true })]).when((s) => T.startCollection(s, { at })).then(t, [started(true)], 'a transfer recorded before otp_supplied: as required');
});

t.test('collection completes → disbursing, payout attempt 1 starts in the same decision', async (t) => {
  given([createdE, collecting]).when((s) => T.collectionSettled(s, { outcome: 'completed', providerReference: 'SBX-1', at })).then(t, [payinDone, payout1]);
  t.match(given([createdE, collecting, payinDone, payout1]).state, { status: 'disbursing', payin_status: 'completed', payout_status: 'pending' });
  given([createdE, collecting, payinDone, payout1]).when((s) => T.collectionSettled(s, { outcome: 'completed', providerReference: 'SBX-1', at })).then(t, [], 'replayed outcome: nothing');
});

t.test('collection fails → failed, payout never started', async (t) => {
  given([createdE, collecting]).when((s) => T.collectionSettled(s, { outcome: 'failed', providerReference: null, reason: 'PAYER_NOT_FOUND', at }))
    .then(t, [ev('transfer.payin.failed', { reason: 'PAYER_NOT_FOUND', at }), ev('transfer.failed', { reason: 'PAYER_NOT_FOUND', at })]);
  const s = given([createdE, collecting, ev('transfer.payin.failed', { reason: 'PAYER_NOT_FOUND', at }), ev('transfer.failed', { reason: 'PAYER_NOT_FOUND', at })]).state;
  t.match(s, { status: 'failed', payin_status: 'failed', payout_status: 'not_started' });
  t.same(s.history.map((h) => h.status), ['pending', 'collecting', 'failed']);
});

t.test('disbursement completes → payout completed then transfer completed', async (t) => {
  const base = [createdE, collecting, payinDone, payout1];
  given(base).when((s) => T.payoutSettled(s, { attempt: 1, outcome: 'completed', providerReference: 'SBX-2', at }))
    .then(t, [ev('transfer.payout.completed', { attempt: 1, provider_reference: 'SBX-2', at }), ev('transfer.completed', { at })]);
  const done = given([...base, ev('transfer.payout.completed', { attempt: 1, provider_reference: 'SBX-2', at }), ev('transfer.completed', { at })]).state;
  t.match(done, { status: 'completed', payin_status: 'completed', payout_status: 'completed' });
  t.same(done.history.map((h) => h.status), ['pending', 'collecting', 'disbursing', 'completed']);
});

t.test('disbursement fails → failed; relaunch allowed only then', async (t) => {
  const base = [createdE, collecting, payinDone, payout1];
  given(base).when((s) => T.payoutSettled(s, { attempt: 1, outcome: 'failed', providerReference: null, reason: 'RECIPIENT_NOT_FOUND', at }))
    .then(t, [payout1Failed, failed]);
  const afterFail = [...base, payout1Failed, failed];
  t.match(given(afterFail).state, { status: 'failed', payin_status: 'completed', payout_status: 'failed' });
  const recipient = { ...created.recipient, phone: '+221770000002' };
  given(afterFail).when((s) => T.relaunchPayout(s, { recipient, payoutAmount: '9000', at }))
    .then(t, [ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '9000', currency: 'XOF', recipient, at })]);
  given(afterFail).when((s) => T.relaunchPayout(s, { at }))
    .then(t, [ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })], 'defaults to the previous leg');
  for (const [name, events] of [
    ['pending', [createdE]], ['collecting', [createdE, collecting]], ['disbursing', base],
    ['collection failed', [createdE, collecting, ev('transfer.payin.failed', { reason: 'X', at }), ev('transfer.failed', { reason: 'X', at })]],
  ] as Array<[string, T.TransferEvent[]]>) {
    given(events).when((s) => T.relaunchPayout(s, { at })).thenRefuses(t, 'relaunch_not_allowed', `refused when ${name}`);
  }
  const relaunched = given([...afterFail, ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })]).state;
  t.match(relaunched, { status: 'disbursing', payin_status: 'completed', payout_status: 'pending' });
  given([...afterFail, ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })])
    .when((s) => T.relaunchPayout(s, { at })).thenRefuses(t, 'relaunch_not_allowed', 'a second concurrent relaunch is refused');
  given([...afterFail, ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })])
    .when((s) => T.payoutSettled(s, { attempt: 1, outcome: 'completed', providerReference: 'late', at })).then(t, [], 'a late outcome of an old attempt changes nothing');
});
