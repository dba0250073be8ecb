// Refunds in the domain (CONTRACT §9): the payin's claims on its refundable amount (payin-refunds.ts:
// only the merchant's own completed payin, at most what is left, the amount defaulting to it, a failed
// refund giving its claim back, each refund settled once), the refund's lifecycle (refund.ts), its
// view, the payin's refund fields, the sandbox's plan by amount, and the ledger audit of refunds.
import t from 'tap';
import * as P from '../domain/payin.ts';
import * as R from '../domain/refund.ts';
import * as W from '../domain/wallet.ts';
import { LedgerAudit, type AuditedEvent } from '../domain/ledger-audit.ts';
import { renderRefund } from '../projections/views/refund.ts';
import { renderPayin } from '../projections/views/payin.ts';
import { fold } from '../domain/decider.ts';
import { deciderSpec } from './helpers/spec.ts';

const at = '2026-06-01T10:00:00.000Z';
const source = { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' };
const created: P.PayinCreated = {
  payin_id: 'p-1', merchant_id: 'm-1', customer_id: 'c-1', quote_id: 'q-1',
  send_amount: '5000', send_currency: 'XAF', receive_amount: '4925', receive_currency: 'XAF', total_fee: '75',
  country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', source,
  pricing: { percent: '1.5', fixed: '0', percent_fee: '75', fixed_fee: '0', total_fee: '75', fee_currency: 'XAF', fx_rate: '1', fixed_side: 'send' },
  wallet_impact: { effects: [] }, metadata: {}, otp_required: false, otp_supplied: false, at,
};
const lifecycle: P.PayinEvent[] = [
  { type: 'payin.created', data: created }, { type: 'payin.pending', data: { reason: 'awaiting the provider', at } },
];
const completedPayin: P.PayinEvent[] = [...lifecycle, { type: 'payin.completed', data: { provider_reference: 'SBX-1', at } }];
const claim = (refundId: string, amount?: bigint, merchantId = 'm-1'): P.PayinCommand => ({ type: 'ClaimRefund', data: { refundId, merchantId, amount, at } });
const claimed = (refundId: string, amount: string): P.PayinEvent => ({ type: 'payin.refund_claimed', data: { refund_id: refundId, amount, at } });
const settled = (refundId: string, outcome: 'completed' | 'failed'): P.PayinEvent => ({ type: 'payin.refund_settled', data: { refund_id: refundId, outcome, at } });
const settle = (refundId: string, outcome: 'completed' | 'failed'): P.PayinCommand => ({ type: 'SettleRefund', data: { refundId, outcome, at } });
const payin = (events: P.PayinEvent[]) => deciderSpec(P.payinDecider).given(events);

t.test('a claim: the merchant\'s own completed payin, at most what is left, the default being all of it', async (t) => {
  payin(completedPayin).when(claim('r-1', 2000n)).then(t, [claimed('r-1', '2000')]);
  payin(completedPayin).when(claim('r-1')).then(t, [claimed('r-1', '5000')], 'the amount defaults to what is left');
  payin(completedPayin).when(claim('r-1', 5001n)).thenThrows(t, 'refund_exceeds_payin');
  payin([...completedPayin, claimed('r-1', '2000')]).when(claim('r-2', 3001n)).thenThrows(t, 'refund_exceeds_payin', 'an open claim counts');
  payin([...completedPayin, claimed('r-1', '2000')]).when(claim('r-2')).then(t, [claimed('r-2', '3000')]);
  payin([...completedPayin, claimed('r-1', '5000')]).when(claim('r-2')).thenThrows(t, 'refund_exceeds_payin', 'nothing left');
  payin([...completedPayin, claimed('r-1', '5000'), settled('r-1', 'completed')]).when(claim('r-2', 1n)).thenThrows(t, 'refund_exceeds_payin', 'a completed claim counts');
  payin([...completedPayin, claimed('r-1', '5000'), settled('r-1', 'failed')]).when(claim('r-2')).then(t, [claimed('r-2', '5000')], 'a failed refund gave its claim back');
  payin([...completedPayin, claimed('r-1', '2000')]).when(claim('r-1', 2000n)).thenNothing(t, 'the same refund claims once');
  payin(lifecycle).when(claim('r-1')).thenThrows(t, 'refund_not_allowed', 'a pending payin');
  payin([...lifecycle, { type: 'payin.failed', data: { reason: 'X', provider_reference: null, at } }]).when(claim('r-1')).thenThrows(t, 'refund_not_allowed', 'a failed payin');
  payin(completedPayin).when(claim('r-1', 100n, 'm-2')).thenThrows(t, 'payin_not_found', "another merchant's payin");
  payin([]).when(claim('r-1')).thenThrows(t, 'payin_not_found', 'no payin');
});

t.test('a claim settles once; the payin shows refunded_amount and refund_ids', async (t) => {
  const events = [...completedPayin, claimed('r-1', '2000'), claimed('r-2', '1000')];
  payin(events).when(settle('r-1', 'completed')).then(t, [settled('r-1', 'completed')]);
  payin([...events, settled('r-1', 'completed')]).when(settle('r-1', 'failed')).thenNothing(t, 'a replayed outcome');
  payin(events).when(settle('r-9', 'completed')).thenNothing(t, 'an unknown refund');
  const state = fold(P.payinDecider, [...events, settled('r-1', 'completed'), settled('r-2', 'failed')]);
  t.match(renderPayin(state), { status: 'completed', refunded_amount: '2000', refund_ids: ['r-1', 'r-2'], updated_at: at });
  t.match(renderPayin(fold(P.payinDecider, completedPayin)), { refunded_amount: '0', refund_ids: [] });
});

t.test('the refund: created then pending, settled once, rendered with exactly the contract\'s fields', async (t) => {
  const create: R.RefundCommand = {
    type: 'CreateRefund',
    data: { refundId: 'r-1', merchantId: 'm-1', payinId: 'p-1', amount: 2000n, currency: 'XAF', recipient: source, operatorCode: 'CM_MTN_MOMO', reason: null, metadata: {}, availability: {}, at },
  };
  const refund = (events: R.RefundEvent[]) => deciderSpec(R.refundDecider).given(events);
  const events = refund([]).when(create).events();
  t.match(events, [{ type: 'refund.created', data: { amount: '2000', hold_id: 'r-1', recipient: source } }, { type: 'refund.pending' }]);
  refund(events).when(create).thenNothing(t, 'a retried create');
  const closed = { CM_MTN_MOMO: { payin: 'operational', payout: 'closed' } } as const;
  refund([]).when({ ...create, data: { ...create.data, availability: closed } })
    .thenThrows(t, 'operator_unavailable', 'a refund is a disbursement: refused while its operator is closed for payouts (CONTRACT §17)');
  refund([]).when({ ...create, data: { ...create.data, availability: { CM_MTN_MOMO: { payin: 'closed', payout: 'operational' } } } }).then(t, events);
  const done = refund(events).when({ type: 'Settle', data: { outcome: 'completed', providerReference: 'SBX-2', at } }).events();
  t.match(done, [{ type: 'refund.completed' }]);
  refund([...events, ...done]).when({ type: 'Settle', data: { outcome: 'failed', providerReference: null, reason: 'X', at } }).thenNothing(t, 'settled once');
  const view = renderRefund(fold(R.refundDecider, [...events, ...done]));
  t.same(Object.keys(view).sort(), [
    'amount', 'created_at', 'currency', 'failure_reason', 'history', 'id', 'merchant_id', 'metadata', 'payin_id', 'provider_failure',
    'provider_reference', 'reason', 'recipient', 'status', 'updated_at',
  ], "§9's fields, and §15's failure_reason and provider_failure");
  t.match(view, {
    id: 'r-1', status: 'completed', amount: '2000', provider_reference: 'SBX-2', failure_reason: null, provider_failure: null,
    history: [{ status: 'created' }, { status: 'pending' }, { status: 'completed' }],
  });
});

t.test('a failed refund answers failure_reason and provider_failure (CONTRACT §15), also when recorded before them', async (t) => {
  const create: R.RefundCommand = {
    type: 'CreateRefund',
    data: { refundId: 'r-1', merchantId: 'm-1', payinId: 'p-1', amount: 2099n, currency: 'XAF', recipient: source, operatorCode: 'CM_MTN_MOMO', reason: null, metadata: {}, availability: {}, at },
  };
  const refund = (events: R.RefundEvent[]) => deciderSpec(R.refundDecider).given(events);
  const events = refund([]).when(create).events();
  const rejected = { provider: 'sandbox', code: 'REFUND_REJECTED', message: 'The operator refused the refund' };
  const failed = refund(events).when({ type: 'Settle', data: { outcome: 'failed', providerReference: 'SBX-3', reason: 'REFUND_REJECTED', at } }).events();
  t.same(failed, [{
    type: 'refund.failed', data: { reason: 'REFUND_REJECTED', failure_reason: 'provider_error', provider_failure: rejected, provider_reference: 'SBX-3', at },
  }], 'the sandbox\'s REFUND_REJECTED is a provider_error');
  const view = renderRefund(fold(R.refundDecider, [...events, ...failed]));
  t.match(view, { status: 'failed', failure_reason: 'provider_error', provider_failure: rejected, history: [{}, {}, { status: 'failed', reason: 'provider_error' }] });
  const before: R.RefundEvent = { type: 'refund.failed', data: { reason: 'REFUND_REJECTED', provider_reference: 'SBX-3', at } };
  t.same(renderRefund(fold(R.refundDecider, [...events, before])), view, 'recorded before: the same answer, read from the code');
});

/** A refund's events and its wallet's, as commands/refunds.ts appends them, for the audit. */
function audited(outcome: 'completed' | 'failed', forge?: (events: AuditedEvent[]) => void) {
  const events: AuditedEvent[] = [];
  const versions = new Map<string, number>();
  const add = (streamId: string, e: { type: string; data: unknown }) => {
    const version = (versions.get(streamId) ?? 0) + 1;
    versions.set(streamId, version);
    events.push({ streamId, version, position: BigInt(events.length + 1), type: e.type, data: e.data as Record<string, unknown> });
  };
  let w = W.walletDecider.initialState();
  const wallet = (decided: W.WalletEvent[]) => {
    for (const e of decided) {
      w = W.walletDecider.evolve(w, e);
      add('wallet-m-1-XAF', e);
    }
  };
  const target = { merchantId: 'm-1', currency: 'XAF', at };
  completedPayin.forEach((e) => add('payin-p-1', e));
  wallet(W.creditCollection(w, { ...target, creditId: 'p-1', gross: 5000n, fee: 75n, operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: 'p-1' } }));
  add('payin-p-1', claimed('r-1', '2000'));
  const refundEvents = R.refundDecider.decide({
    type: 'CreateRefund',
    data: { refundId: 'r-1', merchantId: 'm-1', payinId: 'p-1', amount: 2000n, currency: 'XAF', recipient: source, operatorCode: 'CM_MTN_MOMO', reason: null, metadata: {}, availability: {}, at },
  }, R.refundDecider.initialState());
  refundEvents.forEach((e) => add('refund-r-1', e));
  wallet(W.hold(w, { ...target, holdId: 'r-1', amount: 2000n, reference: { type: 'refund', id: 'r-1' } }));
  add('refund-r-1', outcome === 'completed' ? { type: 'refund.completed', data: { provider_reference: 'SBX', at } } : { type: 'refund.failed', data: { reason: 'X', provider_reference: null, at } });
  add('payin-p-1', settled('r-1', outcome));
  wallet(outcome === 'completed' ? W.postHold(w, { ...target, holdId: 'r-1', fee: 0n, operatorCode: 'CM_MTN_MOMO' }) : W.releaseHold(w, { ...target, holdId: 'r-1', reason: 'X' }));
  forge?.(events);
  const audit = new LedgerAudit();
  events.forEach((e) => audit.add(e));
  return audit.finish();
}

t.test('the ledger audit: a sound refund passes; one whose money or claim disagrees with its state is named', async (t) => {
  for (const outcome of ['completed', 'failed'] as const) {
    const r = audited(outcome);
    t.same(r.findings, [], `a ${outcome} refund passes`);
    t.equal(r.summary.refunds, 1);
  }
  const wrongMoney = audited('completed', (events) => {
    const post = events.find((e) => e.type === 'wallet.hold_posted')!;
    post.type = 'wallet.hold_released';
    post.data = { ...post.data, postings: [{ account: 'merchant:m-1:reserved', side: 'debit', amount: '2000' }, { account: 'merchant:m-1:available', side: 'credit', amount: '2000' }] };
  });
  t.ok(wrongMoney.findings.some((f) => f.check === 'payment_money' && /refund r-1: hold r-1 is released, its state says posted/.test(f.message)), 'a completed refund whose hold was released');
  const noClaim = audited('completed', (events) => {
    events.splice(events.findIndex((e) => e.type === 'payin.refund_settled'), 1);
  });
  t.ok(noClaim.findings.some((f) => f.check === 'payment_money' && /its payin p-1 records 2000, open/.test(f.message)), 'the payin\'s claim not settled alike');
  const orphan = audited('completed', (events) => {
    for (const e of events.filter((x) => x.streamId === 'refund-r-1')) e.streamId = 'other-r-1';
  });
  t.ok(orphan.findings.some((f) => f.check === 'orphan_movement' && /refund r-1/.test(f.message)), 'a movement naming a refund that does not exist');
});
