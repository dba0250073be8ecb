// The wallet ledger, as given/when/then specifications: balanced postings, holds posted or released
// only while open, a balance that never goes below zero, and a state that holds only what is open
// (issue 32): exactly-once for credits and top-ups is the moving stream's (test/wallet.top-ups.e2e,
// test/bus.duplicates.e2e), not a set of ids the wallet would keep for ever.
import t from 'tap';
import * as W from '../domain/wallet.ts';
import { fold } from '../domain/decider.ts';
import { InvariantViolation } from '../domain/errors.ts';
import { deciderSpec } from './helpers/spec.ts';

const m = '11111111-1111-4111-8111-111111111111';
const at = '2026-06-01T10:00:00.000Z';
const target = { merchantId: m, currency: 'XAF', at };
const given = (events: W.WalletEvent[]) => deciderSpec(W.walletDecider).given(events);
const decide = (command: W.WalletCommand, s: W.WalletState) => W.walletDecider.decide(command, s);
// The commands, as plain values.
const topUp = (entryId: string, amount: bigint): W.WalletCommand => ({ type: 'TopUp', data: { ...target, entryId, amount } });
const hold = (holdId: string, amount: bigint): W.WalletCommand => ({ type: 'Hold', data: { ...target, holdId, amount, reference: { type: 'payout', id: holdId } } });
const post = (holdId: string, fee: bigint): W.WalletCommand => ({ type: 'PostHold', data: { ...target, holdId, fee, operatorCode: 'CM_MTN_MOMO' } });
const release = (holdId: string, reason: string | null): W.WalletCommand => ({ type: 'ReleaseHold', data: { ...target, holdId, reason } });
const credit = (creditId: string, gross: bigint, fee: bigint, operatorCode = 'CM_ORANGE_MOMO'): W.WalletCommand => ({
  type: 'CreditCollection', data: { ...target, creditId, gross, fee, operatorCode, reference: { type: 'payin', id: creditId } },
});
const avail = W.accounts.available(m);
const res = W.accounts.reserved(m);

const toppedUp = decide(topUp('e1', 10_000n), W.walletDecider.initialState());
const afterTopUp = fold(W.walletDecider, toppedUp);
const held = decide(hold('p1', 4000n), afterTopUp);
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
  given(toppedUp).when(topUp('e1', 10_000n)).thenMatch(t, [{ type: 'wallet.topped_up', data: { balances: { available: '20000' } } }],
    'the wallet keeps no top-up ids: once is the top-up stream\'s (commands/wallets.ts)');
  given([]).when(topUp('e2', 99n)).thenThrows(t, 'amount_out_of_range', 'below the per-transaction minimum');
  given([]).when(topUp('e3', 1_000_001n)).thenThrows(t, 'amount_out_of_range', 'above the per-transaction maximum');
});

t.test('hold: available → reserved, or insufficient_balance', async (t) => {
  t.match(held, [{
    type: 'wallet.funds_held',
    data: {
      hold_id: 'p1', amount: '4000', balances: { available: '6000', reserved: '4000' },
      postings: [{ account: avail, side: 'debit', amount: '4000' }, { account: res, side: 'credit', amount: '4000' }],
    },
  }]);
  given(toppedUp).when(hold('p2', 10_001n)).thenThrows(t, 'insufficient_balance');
  given([...toppedUp, ...held]).when(hold('p1', 4000n)).thenNothing(t, 'the same hold again: nothing (no second reservation)');
  given([...toppedUp, ...held]).when(hold('p3', 6000n))
    .thenMatch(t, [{ type: 'wallet.funds_held', data: { balances: { available: '0', reserved: '10000' } } }], 'exactly the balance is allowed');
  given([]).when(hold('p4', 100n)).thenThrows(t, 'insufficient_balance', 'an empty wallet holds nothing');
});

t.test('post: reserved is debited to the operator and platform fees, once', async (t) => {
  const posted = decide(post('p1', 40n), afterHold);
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
  given([...toppedUp, ...held, ...posted]).when(post('p1', 40n)).thenThrows(t, InvariantViolation, 'posted again: refused, nothing moves');
  given([...toppedUp, ...held, ...posted]).when(release('p1', 'late failure')).thenThrows(t, InvariantViolation, 'a posted hold is never released');
  const s = fold(W.walletDecider, [...toppedUp, ...held, ...posted]);
  t.equal(sumOf(s), 0n, 'the ledger sums to zero');
  t.equal(W.balanceOf(s, 'platform:fees'), 40n);
});

t.test('release: reserved → available, once', async (t) => {
  const released = decide(release('p1', 'RECIPIENT_NOT_FOUND'), afterHold);
  t.match(released, [{ type: 'wallet.hold_released', data: { hold_id: 'p1', reason: 'RECIPIENT_NOT_FOUND', balances: { available: '10000', reserved: '0' } } }]);
  given([...toppedUp, ...held, ...released]).when(release('p1', 'again')).thenThrows(t, InvariantViolation, 'released again: refused, nothing moves');
  given([...toppedUp, ...held, ...released]).when(post('p1', 0n)).thenThrows(t, InvariantViolation, 'a released hold is never posted');
});

t.test('credit: a settled collection credits net to available and the fee to the platform', async (t) => {
  const credited = decide(credit('in1', 5000n, 75n), W.walletDecider.initialState());
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
  given(credited).when(credit('in1', 5000n, 75n)).thenMatch(t, [{ type: 'wallet.credited', data: { balances: { available: '9850' } } }],
    'the wallet keeps no credit ids: once is the payin\'s or transfer\'s (their Settle decides nothing when settled)');
  const zeroFee = decide(credit('in2', 500n, 0n), W.walletDecider.initialState());
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
  given(toppedUp).when(post('nope', 0n)).thenThrows(t, InvariantViolation, 'posting an unknown hold');
  given(toppedUp).when(release('nope', null)).thenThrows(t, InvariantViolation, 'releasing an unknown hold');
  given([...toppedUp, ...held]).when(post('p1', 4001n)).thenThrows(t, InvariantViolation, 'a fee above the held amount');
  given([]).when(credit('in3', 500n, 500n)).thenThrows(t, InvariantViolation, 'a fee that takes the whole credit');
  const other = { ...target, merchantId: '22222222-2222-4222-8222-222222222222' };
  given(toppedUp).when({ type: 'TopUp', data: { ...other, entryId: 'e9', amount: 100n } }).thenThrows(t, InvariantViolation, 'a wallet of another merchant');
  given(toppedUp).when({ type: 'TopUp', data: { ...target, currency: 'XOF', entryId: 'e9', amount: 100n } }).thenThrows(t, InvariantViolation, 'a wallet in another currency');
});

t.test('a wallet with 100,000 credits folds in linear time, and evolving never changes an earlier state', async (t) => {
  // Not a speed target: a guard on the complexity (a fold that copied a growing state per event was
  // quadratic: minutes for this wallet).
  const credits: W.WalletEvent[] = [];
  let s = W.walletDecider.initialState();
  for (let i = 0; i < 100_000; i++) {
    const e = decide(credit(`c${i}`, 1000n, 10n, 'CM_MTN_MOMO'), s);
    credits.push(...e);
    s = e.reduce(W.walletDecider.evolve, s);
  }
  const started = performance.now();
  const folded = fold(W.walletDecider, credits);
  const ms = performance.now() - started;
  t.ok(ms < 20_000, `folded in ${Math.round(ms)} ms`);
  t.equal(W.available(folded), 99_000_000n);
  const before = afterHold;
  const after = W.walletDecider.evolve(before, decide(release('p1', null), before)[0]!);
  t.same(Object.keys(before.holds), ['p1'], 'the earlier state still has its hold open');
  t.same(after.holds, {}, 'the released hold left the later state');
});

/** The state's size as a snapshot would store it (JSON, bigints as strings). */
const sizeOf = (s: W.WalletState) => JSON.stringify(s, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).length;

t.test('the state holds balances and open holds only: 10,000 of each movement leave it the size it was (issue 32)', async (t) => {
  let s = W.walletDecider.initialState();
  const apply = (c: W.WalletCommand) => { s = decide(c, s).reduce(W.walletDecider.evolve, s); };
  apply(topUp('first', 1_000_000n));
  apply(hold('open-1', 100n));
  apply(credit('first-credit', 1000n, 10n, 'CM_MTN_MOMO'));
  apply(hold('first-posted', 100n));
  apply(post('first-posted', 1n));
  // Fixed-width ids and time; the balances are counted by their accounts (their digits grow with the money).
  const sized = sizeOf({ ...s, balances: {} });
  for (let i = 0; i < 10_000; i++) {
    const n = String(i).padStart(5, '0');
    apply(topUp(`top-${n}`, 1000n));
    apply(credit(`crd-${n}`, 1000n, 10n, 'CM_MTN_MOMO'));
    apply(hold(`pst-${n}`, 100n));
    apply(post(`pst-${n}`, 1n));
    apply(hold(`rel-${n}`, 100n));
    apply(release(`rel-${n}`, null));
  }
  t.same(Object.keys(s), ['merchantId', 'currency', 'balances', 'holds', 'updatedAt'], 'no id sets: balances and holds only');
  t.same(Object.keys(s.holds), ['open-1'], 'holds: the open one only, none of the 20,000 closed');
  t.same(Object.keys(s.balances).sort(), [avail, res, 'platform:fees', 'platform:funding', 'provider:CM_MTN_MOMO'].sort(), 'one balance per account met');
  t.equal(sizeOf({ ...s, balances: {} }), sized, 'beside the balances, the state is the size it was before 60,000 movements');
  t.equal(W.available(s), 1_000_000n - 100n + 990n + 10_000n * (1000n + 990n - 100n) - 100n, 'and the balances took every movement');
  t.equal(W.reserved(s), 100n);
});
