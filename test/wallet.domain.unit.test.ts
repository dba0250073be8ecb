// The wallet ledger, as given/when/then specifications: balanced postings, holds that are posted
// or released once, credits once, and a balance that never goes below zero.
import t from 'tap';
import * as W from '../domain/wallet.ts';
import { fold } from '../domain/decider.ts';
import { InvariantViolation } from '../domain/errors.ts';
import { spec } from './helpers/spec.ts';

const m = '11111111-1111-4111-8111-111111111111';
const at = '2026-06-01T10:00:00.000Z';
const target = { merchantId: m, currency: 'XAF', at };
const given = (events: W.WalletEvent[]) => spec(W.walletDecider).given(events);
const avail = W.accounts.available(m);
const res = W.accounts.reserved(m);

const toppedUp = W.topUp(W.walletDecider.initialState(), { ...target, entryId: 'e1', amount: 10_000n });
const afterTopUp = fold(W.walletDecider, toppedUp);
const held = W.hold(afterTopUp, { ...target, holdId: 'p1', amount: 4000n, reference: { type: 'payout', id: 'p1' } });
const afterHold = fold(W.walletDecider, held, afterTopUp);

const sumOf = (s: W.WalletState) => Object.values(s.balances).reduce((a, b) => a + b, 0n);

t.test('a top-up credits available from platform funding', async (t) => {
  t.match(toppedUp, [{
    type: 'wallet.topped_up',
    data: {
      entry_id: 'e1', amount: '10000', balances: { available: '10000', reserved: '0' },
      postings: [{ account: 'platform:funding', side: 'debit', amount: '10000' }, { account: avail, side: 'credit', amount: '10000' }],
    },
  }]);
  t.equal(W.available(afterTopUp), 10_000n);
  given(toppedUp).when((s) => W.topUp(s, { ...target, entryId: 'e1', amount: 10_000n })).then(t, [], 'the same top-up again: nothing');
});

t.test('hold: available → reserved, or insufficient_balance', async (t) => {
  t.match(held, [{
    type: 'wallet.funds_held',
    data: {
      hold_id: 'p1', amount: '4000', balances: { available: '6000', reserved: '4000' },
      postings: [{ account: avail, side: 'debit', amount: '4000' }, { account: res, side: 'credit', amount: '4000' }],
    },
  }]);
  given(toppedUp).when((s) => W.hold(s, { ...target, holdId: 'p2', amount: 10_001n, reference: { type: 'payout', id: 'p2' } }))
    .thenRefuses(t, 'insufficient_balance');
  given([...toppedUp, ...held]).when((s) => W.hold(s, { ...target, holdId: 'p1', amount: 4000n, reference: { type: 'payout', id: 'p1' } }))
    .then(t, [], 'the same hold again: nothing (no second reservation)');
  given([...toppedUp, ...held]).when((s) => W.hold(s, { ...target, holdId: 'p3', amount: 6000n, reference: { type: 'payout', id: 'p3' } }))
    .thenMatch(t, [{ type: 'wallet.funds_held', data: { balances: { available: '0', reserved: '10000' } } }], 'exactly the balance is allowed');
  given([]).when((s) => W.hold(s, { ...target, holdId: 'p4', amount: 100n, reference: { type: 'payout', id: 'p4' } }))
    .thenRefuses(t, 'insufficient_balance', 'an empty wallet holds nothing');
});

t.test('post: reserved is debited to the operator and platform fees, once', async (t) => {
  const posted = W.postHold(afterHold, { ...target, holdId: 'p1', fee: 40n, operatorCode: 'CM_MTN_MOMO' });
  t.match(posted, [{
    type: 'wallet.hold_posted',
    data: {
      hold_id: 'p1', amount: '4000', fee: '40', balances: { available: '6000', reserved: '0' },
      postings: [
        { account: res, side: 'debit', amount: '4000' },
        { account: 'provider:CM_MTN_MOMO', side: 'credit', amount: '3960' },
        { account: 'platform:fees', side: 'credit', amount: '40' },
      ],
    },
  }]);
  given([...toppedUp, ...held, ...posted]).when((s) => W.postHold(s, { ...target, holdId: 'p1', fee: 40n, operatorCode: 'CM_MTN_MOMO' }))
    .then(t, [], 'posted again: nothing');
  given([...toppedUp, ...held, ...posted]).when((s) => W.releaseHold(s, { ...target, holdId: 'p1', reason: 'late failure' }))
    .then(t, [], 'a posted hold is never released');
  const s = fold(W.walletDecider, [...toppedUp, ...held, ...posted]);
  t.equal(sumOf(s), 0n, 'the ledger sums to zero');
  t.equal(W.balanceOf(s, 'platform:fees'), 40n);
});

t.test('release: reserved → available, once', async (t) => {
  const released = W.releaseHold(afterHold, { ...target, holdId: 'p1', reason: 'RECIPIENT_NOT_FOUND' });
  t.match(released, [{ type: 'wallet.hold_released', data: { hold_id: 'p1', reason: 'RECIPIENT_NOT_FOUND', balances: { available: '10000', reserved: '0' } } }]);
  given([...toppedUp, ...held, ...released]).when((s) => W.releaseHold(s, { ...target, holdId: 'p1', reason: 'again' })).then(t, [], 'released again: nothing');
  given([...toppedUp, ...held, ...released]).when((s) => W.postHold(s, { ...target, holdId: 'p1', fee: 0n, operatorCode: 'CM_MTN_MOMO' }))
    .then(t, [], 'a released hold is never posted');
});

t.test('credit: a settled collection credits net to available and the fee to the platform, once', async (t) => {
  const credited = W.creditCollection(W.walletDecider.initialState(), {
    ...target, creditId: 'in1', gross: 5000n, fee: 75n, operatorCode: 'CM_ORANGE_MOMO', reference: { type: 'payin', id: 'in1' },
  });
  t.match(credited, [{
    type: 'wallet.credited',
    data: {
      credit_id: 'in1', gross_amount: '5000', fee: '75', net_amount: '4925', balances: { available: '4925', reserved: '0' },
      postings: [
        { account: 'provider:CM_ORANGE_MOMO', side: 'debit', amount: '5000' },
        { account: avail, side: 'credit', amount: '4925' },
        { account: 'platform:fees', side: 'credit', amount: '75' },
      ],
    },
  }]);
  given(credited).when((s) => W.creditCollection(s, {
    ...target, creditId: 'in1', gross: 5000n, fee: 75n, operatorCode: 'CM_ORANGE_MOMO', reference: { type: 'payin', id: 'in1' },
  })).then(t, [], 'the same credit again: nothing (a redelivery never credits twice)');
  const zeroFee = W.creditCollection(W.walletDecider.initialState(), {
    ...target, creditId: 'in2', gross: 500n, fee: 0n, operatorCode: 'CM_ORANGE_MOMO', reference: { type: 'payin', id: 'in2' },
  });
  t.equal(zeroFee[0]!.data.postings.length, 2, 'a zero fee is not posted');
});

t.test('invariants: every event balances, merchant balances never go below zero', async (t) => {
  const unbalanced: W.WalletEvent = {
    type: 'wallet.topped_up',
    data: {
      ...toppedUp[0]!.data,
      postings: [{ account: 'platform:funding', side: 'debit', amount: '100' }, { account: avail, side: 'credit', amount: '101' }],
    } as W.WalletEvent['data'] & { entry_id: string; amount: string; reference: W.MovementRef },
  };
  t.throws(() => fold(W.walletDecider, [unbalanced]), InvariantViolation, 'an unbalanced event is refused loudly');
  const overdraw: W.WalletEvent = { ...held[0]!, data: { ...held[0]!.data, postings: [
    { account: avail, side: 'debit', amount: '20000' }, { account: res, side: 'credit', amount: '20000' },
  ] } } as W.WalletEvent;
  t.throws(() => fold(W.walletDecider, [...toppedUp, overdraw]), InvariantViolation, 'available below zero is refused loudly');
  t.throws(() => W.postHold(afterTopUp, { ...target, holdId: 'nope', fee: 0n, operatorCode: 'CM_MTN_MOMO' }), InvariantViolation, 'posting an unknown hold');
});

t.test('a wallet with 100,000 credits folds in linear time, and evolving never changes an earlier state', async (t) => {
  // Not a speed target: a guard on the complexity. With a copy of every id seen per event, this
  // fold was quadratic (5·10⁹ key copies: minutes); persistent sets make it a fraction of a second.
  const credits: W.WalletEvent[] = [];
  let s = W.walletDecider.initialState();
  for (let i = 0; i < 100_000; i++) {
    const e = W.creditCollection(s, { ...target, creditId: `c${i}`, gross: 1000n, fee: 10n, operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: `c${i}` } });
    credits.push(...e);
    s = e.reduce(W.walletDecider.evolve, s);
  }
  const started = performance.now();
  const folded = fold(W.walletDecider, credits);
  const ms = performance.now() - started;
  t.ok(ms < 20_000, `folded in ${Math.round(ms)} ms`);
  t.equal(W.available(folded), 99_000_000n);
  t.same(W.creditCollection(folded, { ...target, creditId: 'c99999', gross: 1000n, fee: 10n, operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: 'c99999' } }), [], 'a credit id seen long ago: nothing');
  const before = afterHold;
  const after = W.walletDecider.evolve(before, W.releaseHold(before, { ...target, holdId: 'p1', reason: null })[0]!);
  t.equal(before.holds.get('p1')!.status, 'held', 'the earlier state still has its hold held');
  t.equal(after.holds.get('p1')!.status, 'released');
});
