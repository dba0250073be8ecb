// The transfer aggregate, as given/when/then specifications: given its events, when a command (a
// plain value), then the events it decides or the error that refuses it.
import t from 'tap';
import * as T from '../domain/transfer.ts';
import { walletCommands } from '../domain/transfer-wallets.ts';
import type { QuoteState } from '../domain/quote.ts';
import type { QuoteCreated, QuotePricing } from '../domain/quote-pricing.ts';
import type { WalletImpact } from '../domain/payment.ts';
import { InvariantViolation } from '../domain/errors.ts';
import type { KycGate } from '../domain/kyc.ts';
import { sandboxFailure, type Failure } from '../domain/failure-reasons.ts';
import { renderTransfer } from '../projections/views/transfer.ts';
import { deciderSpec } from './helpers/spec.ts';

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
const given = (events: T.TransferEvent[]) => deciderSpec(T.transferDecider).given(events);

const createdE = ev('transfer.created', created);
const collecting = ev('transfer.collection_started', { leg_reference: T.collectionReference(id), operator_code: 'CM_MTN_MOMO', phone: '+237670000001', amount: '10204', currency: 'XAF', otp: false, at });
const payinDone = ev('transfer.payin.completed', { provider_reference: 'SBX-1', at });
const payout1 = ev('transfer.payout.started', { attempt: 1, leg_reference: T.payoutReference(id, 1), amount: '10000', currency: 'XOF', recipient: created.recipient, at });
const notFound = sandboxFailure('RECIPIENT_NOT_FOUND');
const payout1Failed = ev('transfer.payout.failed', { attempt: 1, reason: 'RECIPIENT_NOT_FOUND', ...notFound, at });
const failed = ev('transfer.failed', { reason: 'RECIPIENT_NOT_FOUND', ...notFound, at });
/** As recorded before failures were (CONTRACT §15): the provider's code alone. */
const payout1FailedBefore = ev('transfer.payout.failed', { attempt: 1, reason: 'RECIPIENT_NOT_FOUND', at });
const failedBefore = ev('transfer.failed', { reason: 'RECIPIENT_NOT_FOUND', at });

// The transfer quote `created` was made from, and the command that creates it.
const quote: QuoteCreated = {
  quote_id: 'q', merchant_id: 'm', customer_id: null, flow_type: 'transfer', send_amount: '10204', send_currency: 'XAF',
  receive_amount: '10000', receive_currency: 'XOF', total_fee: '204', country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money',
  corridor_code: 'CM-SN-XAF-XOF', corridor_type: 'cross_border', payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO',
  payin_amount: '10204', payin_currency: 'XAF', payout_amount: '10000', payout_currency: 'XOF',
  pricing: {} as QuotePricing, wallet_impact: null as unknown as WalletImpact, expires_at: '2026-06-01T10:15:00.000Z', at,
};
const noGate: KycGate = { requiredOperators: [], customerStatus: null };
const create = (data: Partial<T.CreateTransfer> = {}): T.TransferCommand => ({
  type: 'CreateTransfer',
  data: {
    transferId: id, merchantId: 'm', customerId: 'c', quoteId: 'q', quote, payer: created.payer, recipient: created.recipient,
    otpSupplied: false, kyc: noGate, paymentReasonCode: null, senderSourceOfFunds: null, senderOccupation: null, metadata: {}, availability: {}, at, ...data,
  },
});
const startCollection: T.TransferCommand = { type: 'StartCollection', data: { at } };
const relaunch = (data: Partial<T.RelaunchPayout> = {}): T.TransferCommand => ({ type: 'RelaunchPayout', data: { merchantId: 'm', availability: {}, at, ...data } });

t.test('create → pending, both legs not started', async (t) => {
  const s = given([createdE]).state;
  t.match(s, { status: 'pending', payin_status: 'not_started', payout_status: 'not_started' });
  given([createdE]).when(create()).thenNothing(t, 'a retried create decides nothing');
});

t.test('create: the quote\'s transfer, with the parties checked against it', async (t) => {
  given([]).when(create()).then(t, [ev('transfer.created', { ...created, otp_supplied: false }), collecting], 'the quote\'s amounts, corridor and operators; its collection starts with it');
  given([]).when(create({ payer: { ...created.payer, phone: '670000001' } })).thenMatch(t, [{ data: { payer: { phone: '+237670000001' } } }], 'a phone is normalised');
  given([]).when(create({ payer: { ...created.payer, operator_code: 'CM_ORANGE_MOMO' } })).thenThrows(t, 'quote_mismatch', 'a payer on another operator than quoted');
  given([]).when(create({ recipient: { ...created.recipient, country_code: 'CI' } })).thenThrows(t, 'quote_mismatch', 'a recipient in another country than quoted');
  const incomplete = given([]).when(create({ payer: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO' } })).thenThrows(t, 'bad_request');
  t.match(incomplete?.details, [{ field: 'payer.phone' }], 'a payer without a phone names the field');
});

t.test('create: the KYC gate of the disbursing operator (routing kyc_required_operators)', async (t) => {
  const gated = (customerStatus: KycGate['customerStatus']) => create({ kyc: { requiredOperators: ['SN_WAVE_MOMO'], customerStatus } });
  given([]).when(gated('not_started')).thenThrows(t, 'kyc_required', 'a customer without KYC');
  given([]).when(gated('pending')).thenThrows(t, 'kyc_required', 'a KYC still in review');
  given([]).when(gated('verified')).thenMatch(t, [{ type: 'transfer.created' }], 'a verified customer');
  given([]).when(create({ kyc: { requiredOperators: ['SN_ORANGE_MOMO'], customerStatus: null } })).thenMatch(t, [{ type: 'transfer.created' }], 'another operator\'s gate: none');
  given([]).when(gated(null)).thenThrows(t, InvariantViolation, 'a gate without the customer\'s status is a bug');
  given([]).when(create({ kyc: { requiredOperators: ['SN_WAVE_MOMO'], customerStatus: 'not_started' }, payer: { ...created.payer, operator_code: 'CM_ORANGE_MOMO' } }))
    .thenThrows(t, 'quote_mismatch', 'the parties are checked before the gate');
});

t.test('create: an OTP when the payer\'s operator requires one', async (t) => {
  const sn = { ...quote, corridor_code: 'SN-SN-XOF-XOF', corridor_type: 'domestic' as const, payer_operator_code: 'SN_ORANGE_MOMO', payin_currency: 'XOF' as const };
  const payer = { country_code: 'SN', rail_type: 'mobile_money', phone: '+221770000009', operator_code: 'SN_ORANGE_MOMO' };
  given([]).when(create({ quote: sn, payer })).thenThrows(t, 'otp_required', 'SN_ORANGE_MOMO without an OTP');
  given([]).when(create({ quote: sn, payer, otpSupplied: true })).thenMatch(t, [{ data: { otp_required: true, otp_supplied: true } }], 'with one');
  given([]).when(create({ otpSupplied: true })).thenMatch(t, [{ data: { otp_required: false, otp_supplied: true } }], 'one sent where none is needed is recorded');
  given([]).when(create({ quote: sn, payer, kyc: { requiredOperators: ['SN_WAVE_MOMO'], customerStatus: 'rejected' } }))
    .thenThrows(t, 'kyc_required', 'the KYC gate before the OTP');
});

t.test('the transfer quote a create reads: the merchant\'s, for a transfer', async (t) => {
  const state = (q: Partial<QuoteCreated>): QuoteState => ({ exists: true, quote: { ...quote, ...q }, consumed: null });
  t.equal(T.transferQuote(state({}), 'm').payout_currency, 'XOF');
  t.throws(() => T.transferQuote({ exists: false, quote: null, consumed: null }, 'm'), { code: 'quote_not_found' }, 'no quote');
  t.throws(() => T.transferQuote(state({}), 'another'), { code: 'quote_not_found' }, 'another merchant\'s: the same answer');
  t.throws(() => T.transferQuote(state({ flow_type: 'payout' }), 'm'), { code: 'quote_mismatch' }, 'a payout quote');
});

t.test('the collection starts once (the saga, for a transfer created without it by an earlier version)', async (t) => {
  given([createdE]).when(startCollection).then(t, [collecting]);
  given([createdE, collecting]).when(startCollection).thenNothing(t, 'redelivered trigger: nothing');
  t.match(given([createdE, collecting]).state, { status: 'collecting', payin_status: 'pending', payout_status: 'not_started' });
  given([]).when(startCollection).thenThrows(t, InvariantViolation, 'no transfer: a bug, not a refusal');
});

t.test('the collection takes the OTP whenever one was supplied, required or not (issue 28)', async (t) => {
  const withOtp = (data: Partial<T.TransferCreated>) => ev('transfer.created', { ...created, ...data });
  const started = (otp: boolean) => ev('transfer.collection_started', { ...(collecting.data as object), otp } as Extract<T.TransferEvent, { type: 'transfer.collection_started' }>['data']);
  given([withOtp({ otp_required: false, otp_supplied: true })]).when(startCollection).then(t, [started(true)], 'supplied where none is needed: sent');
  given([withOtp({ otp_required: true, otp_supplied: true })]).when(startCollection).then(t, [started(true)], 'required and supplied: sent');
  given([withOtp({ otp_required: false, otp_supplied: false })]).when(startCollection).then(t, [started(false)], 'none supplied: none sent');
  given([withOtp({ otp_required: true })]).when(startCollection).then(t, [started(true)], 'a transfer recorded before otp_supplied: as required');
});

t.test('submissions are recorded once, only while their leg is pending', async (t) => {
  const collectionSubmitted = (providerReference: string): T.TransferCommand => ({ type: 'RecordCollectionSubmission', data: { providerReference, at } });
  const payoutSubmitted = (attempt: number, providerReference: string): T.TransferCommand => ({ type: 'RecordPayoutSubmission', data: { attempt, providerReference, at } });
  const submittedE = ev('transfer.collection_submitted', { provider_reference: 'SBX-1', at });
  given([createdE, collecting]).when(collectionSubmitted('SBX-1')).then(t, [submittedE]);
  given([createdE, collecting, submittedE]).when(collectionSubmitted('SBX-1')).thenNothing(t, 'the same reference again: nothing');
  given([createdE]).when(collectionSubmitted('SBX-1')).thenNothing(t, 'a collection not started: nothing');
  const base = [createdE, collecting, payinDone, payout1];
  given(base).when(payoutSubmitted(1, 'SBX-2')).then(t, [ev('transfer.payout.submitted', { attempt: 1, provider_reference: 'SBX-2', at })]);
  given(base).when(payoutSubmitted(2, 'SBX-2')).thenNothing(t, 'an attempt that does not exist: nothing');
  given([...base, payout1Failed, failed]).when(payoutSubmitted(1, 'SBX-2')).thenNothing(t, 'a settled attempt: nothing');
});

t.test('collection completes → disbursing, payout attempt 1 starts in the same decision', async (t) => {
  const completed: T.TransferCommand = { type: 'SettleCollection', data: { outcome: 'completed', providerReference: 'SBX-1', at } };
  given([createdE, collecting]).when(completed).then(t, [payinDone, payout1]);
  t.match(given([createdE, collecting, payinDone, payout1]).state, { status: 'disbursing', payin_status: 'completed', payout_status: 'pending' });
  given([createdE, collecting, payinDone, payout1]).when(completed).thenNothing(t, 'replayed outcome: nothing');
});

t.test('collection fails → failed, payout never started', async (t) => {
  const payerNotFound = sandboxFailure('PAYER_NOT_FOUND');
  const payinFailed = ev('transfer.payin.failed', { reason: 'PAYER_NOT_FOUND', ...payerNotFound, at });
  const transferFailed = ev('transfer.failed', { reason: 'PAYER_NOT_FOUND', ...payerNotFound, at });
  given([createdE, collecting]).when({ type: 'SettleCollection', data: { outcome: 'failed', providerReference: null, reason: 'PAYER_NOT_FOUND', failure: payerNotFound, at } })
    .then(t, [payinFailed, transferFailed]);
  const s = given([createdE, collecting, payinFailed, transferFailed]).state;
  t.match(s, { status: 'failed', payin_status: 'failed', payout_status: 'not_started' });
  t.match(s.collection, { failure_reason: 'account_not_found', provider_failure: { provider: 'sandbox', code: 'PAYER_NOT_FOUND' } });
  t.same(s.history.map((h) => [h.status, h.reason]), [['pending', null], ['collecting', null], ['failed', 'account_not_found']]);
  const mtn: Failure = { failure_reason: 'insufficient_funds', provider_failure: { provider: 'mtn_momo', code: 'NOT_ENOUGH_FUNDS', message: 'Not enough funds' } };
  given([createdE, collecting]).when({ type: 'SettleCollection', data: { outcome: 'failed', providerReference: null, reason: 'NOT_ENOUGH_FUNDS', failure: mtn, at } })
    .then(t, [ev('transfer.payin.failed', { reason: 'NOT_ENOUGH_FUNDS', ...mtn, at }), ev('transfer.failed', { reason: 'NOT_ENOUGH_FUNDS', ...mtn, at })], "MTN's failure as told");
  given([createdE, collecting]).when({ type: 'SettleCollection', data: { outcome: 'failed', providerReference: null, at } })
    .thenMatch(t, [{ data: { reason: 'COLLECTION_FAILED', failure_reason: 'provider_error', provider_failure: null } }, { type: 'transfer.failed' }], 'no reason at all: provider_error');
});

t.test('failures: the transfer and its legs answer failure_reason and provider_failure, also for events recorded before', async (t) => {
  const disbursing = [createdE, collecting, payinDone, payout1];
  const now = renderTransfer(given([...disbursing, payout1Failed, failed]).state);
  const before = renderTransfer(given([...disbursing, payout1FailedBefore, failedBefore]).state);
  t.match(now, {
    status: 'failed', failure_reason: 'account_not_found', provider_failure: notFound.provider_failure,
    execution: {
      collection: { status: 'completed', failure_reason: null, provider_failure: null },
      disbursements: [{ attempt: 1, status: 'failed', failure_reason: 'account_not_found', provider_failure: notFound.provider_failure }],
    },
  });
  t.same(now.history, [
    { status: 'pending', reason: null, created_at: at }, { status: 'collecting', reason: null, created_at: at },
    { status: 'disbursing', reason: null, created_at: at }, { status: 'failed', reason: 'account_not_found', created_at: at },
  ]);
  t.same(before, now, 'recorded before: the same answer, read from the code');
  const relaunched = renderTransfer(given([...disbursing, payout1Failed, failed, ev('transfer.payout.started', {
    attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at,
  })]).state);
  t.match(relaunched, { status: 'disbursing', failure_reason: null, provider_failure: null }, 'relaunched: no longer failed');
  t.match((relaunched.execution as { disbursements: unknown[] }).disbursements, [
    { attempt: 1, failure_reason: 'account_not_found' }, { attempt: 2, status: 'pending', failure_reason: null, provider_failure: null },
  ], 'the failed attempt keeps its failure');
  const collectionBefore = renderTransfer(given([createdE, collecting, ev('transfer.payin.failed', { reason: 'INSUFFICIENT_FUNDS', at }), ev('transfer.failed', { reason: 'INSUFFICIENT_FUNDS', at })]).state);
  t.match(collectionBefore, {
    status: 'failed', failure_reason: 'insufficient_funds', provider_failure: { provider: 'sandbox', code: 'INSUFFICIENT_FUNDS' },
    execution: { collection: { status: 'failed', failure_reason: 'insufficient_funds', provider_failure: { provider: 'sandbox', code: 'INSUFFICIENT_FUNDS' } } },
  });
});

t.test('disbursement completes → payout completed then transfer completed', async (t) => {
  const base = [createdE, collecting, payinDone, payout1];
  given(base).when({ type: 'SettlePayout', data: { attempt: 1, outcome: 'completed', providerReference: 'SBX-2', at } })
    .then(t, [ev('transfer.payout.completed', { attempt: 1, provider_reference: 'SBX-2', at }), ev('transfer.completed', { at })]);
  const done = given([...base, ev('transfer.payout.completed', { attempt: 1, provider_reference: 'SBX-2', at }), ev('transfer.completed', { at })]).state;
  t.match(done, { status: 'completed', payin_status: 'completed', payout_status: 'completed' });
  t.same(done.history.map((h) => h.status), ['pending', 'collecting', 'disbursing', 'completed']);
});

t.test('disbursement fails → failed; relaunch allowed only then', async (t) => {
  const base = [createdE, collecting, payinDone, payout1];
  given(base).when({ type: 'SettlePayout', data: { attempt: 1, outcome: 'failed', providerReference: null, reason: 'RECIPIENT_NOT_FOUND', at } })
    .then(t, [payout1Failed, failed]);
  const afterFail = [...base, payout1Failed, failed];
  t.match(given(afterFail).state, { status: 'failed', payin_status: 'completed', payout_status: 'failed' });
  const recipient = { ...created.recipient, phone: '+221770000002' };
  given(afterFail).when(relaunch({ recipient, payoutAmount: '9000' }))
    .then(t, [ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '9000', currency: 'XOF', recipient, at })]);
  given(afterFail).when(relaunch())
    .then(t, [ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })], 'defaults to the previous leg');
  for (const [name, events] of [
    ['pending', [createdE]], ['collecting', [createdE, collecting]], ['disbursing', base],
    ['collection failed', [createdE, collecting, ev('transfer.payin.failed', { reason: 'X', at }), ev('transfer.failed', { reason: 'X', at })]],
  ] as Array<[string, T.TransferEvent[]]>) {
    given(events).when(relaunch()).thenThrows(t, 'relaunch_not_allowed', `refused when ${name}`);
  }
  const relaunched = given([...afterFail, ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })]).state;
  t.match(relaunched, { status: 'disbursing', payin_status: 'completed', payout_status: 'pending' });
  given([...afterFail, ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })])
    .when(relaunch()).thenThrows(t, 'relaunch_not_allowed', 'a second concurrent relaunch is refused');
  given([...afterFail, ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient: created.recipient, at })])
    .when({ type: 'SettlePayout', data: { attempt: 1, outcome: 'completed', providerReference: 'late', at } }).thenNothing(t, 'a late outcome of an old attempt changes nothing');
});

t.test('relaunch: the merchant\'s transfer, a new amount within the limits, a new recipient as quoted', async (t) => {
  const afterFail = [createdE, collecting, payinDone, payout1, payout1Failed, failed];
  given([]).when(relaunch()).thenThrows(t, 'not_found', 'no transfer');
  given(afterFail).when(relaunch({ merchantId: 'another' })).thenThrows(t, 'not_found', 'another merchant\'s: the same answer');
  given(afterFail).when(relaunch({ payoutAmount: '9000.50' })).thenThrows(t, 'bad_request', 'francs have no minor unit');
  given(afterFail).when(relaunch({ payoutAmount: '99' })).thenThrows(t, 'amount_out_of_range', 'below the minimum');
  given(afterFail).when(relaunch({ payoutAmount: '9000.00' })).thenMatch(t, [{ data: { amount: '9000' } }], 'the amount as whole francs');
  given(afterFail).when(relaunch({ recipient: { ...created.recipient, operator_code: 'SN_FREE_MOMO' } }))
    .thenThrows(t, 'quote_mismatch', 'a recipient on another operator than quoted');
  given([createdE]).when(relaunch({ payoutAmount: '99' })).thenThrows(t, 'amount_out_of_range', 'the request is checked before the transfer\'s status');
  const closedFor = (flow: 'payin' | 'payout') => ({ SN_WAVE_MOMO: { payin: 'operational', payout: 'operational', [flow]: 'closed' } as const });
  given(afterFail).when(relaunch({ availability: closedFor('payout') }))
    .thenThrows(t, 'operator_unavailable', 'the recipient\'s operator closed for payouts: no new disbursement');
  given(afterFail).when(relaunch({ availability: closedFor('payin') }))
    .thenMatch(t, [{ type: 'transfer.payout.started', data: { attempt: 2 } }], 'closed for payins only: the relaunch goes on');
});

t.test('the wallet commands a transfer\'s events call for', async (t) => {
  const on = (currency: string) => ({ merchantId: 'm', currency, at });
  const reference = { type: 'transfer', id } as const;
  const before = (events: T.TransferEvent[]) => given(events).state;
  t.same(walletCommands(before([]), [createdE]), [
    { type: 'Hold', data: { ...on('XOF'), holdId: T.payoutReference(id, 1), amount: 10_000n, reference } },
  ], 'created: the payout amount held');
  t.same(walletCommands(before([createdE]), [collecting]), [], 'the collection starting moves no money');
  t.same(walletCommands(before([createdE, collecting]), [payinDone, payout1]), [
    { type: 'CreditCollection', data: { ...on('XAF'), creditId: T.collectionReference(id), gross: 10_204n, fee: 204n, operatorCode: 'CM_MTN_MOMO', reference } },
  ], 'collected: the wallet credited; attempt 1 was held at creation');
  t.same(walletCommands(before([createdE, collecting]), [ev('transfer.payin.failed', { reason: 'X', at }), ev('transfer.failed', { reason: 'X', at })]), [
    { type: 'ReleaseHold', data: { ...on('XOF'), holdId: T.payoutReference(id, 1), reason: 'X' } },
  ], 'collection failed: the hold released');
  const disbursing = [createdE, collecting, payinDone, payout1];
  t.same(walletCommands(before(disbursing), [ev('transfer.payout.completed', { attempt: 1, provider_reference: 'SBX-2', at }), ev('transfer.completed', { at })]), [
    { type: 'PostHold', data: { ...on('XOF'), holdId: T.payoutReference(id, 1), fee: 0n, operatorCode: 'SN_WAVE_MOMO' } },
  ], 'disbursed: the hold posted');
  t.same(walletCommands(before(disbursing), [payout1Failed, failed]), [
    { type: 'ReleaseHold', data: { ...on('XOF'), holdId: T.payoutReference(id, 1), reason: 'RECIPIENT_NOT_FOUND' } },
  ], 'disbursement failed: the hold released');
  const payout2 = ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '9000', currency: 'XOF', recipient: created.recipient, at });
  t.same(walletCommands(before([...disbursing, payout1Failed, failed]), [payout2]), [
    { type: 'Hold', data: { ...on('XOF'), holdId: T.payoutReference(id, 2), amount: 9000n, reference } },
  ], 'relaunched: the new amount held');
});
