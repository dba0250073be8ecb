// The ledger audit as a pure fold (domain/ledger-audit.ts): given these events, these findings.
// Sound histories are made with the wallet's own decisions; broken ones are those histories with
// one event forged (what a bug or a hand-edited store would leave).
import t from 'tap';
import { LedgerAudit, type AuditedEvent, type LedgerCheck } from '../domain/ledger-audit.ts';
import * as W from '../domain/wallet.ts';
import { collectionReference, payoutReference } from '../domain/transfer.ts';

const M = '11111111-1111-4111-8111-111111111111';
const P = '22222222-2222-4222-8222-222222222222';
const Q = '33333333-3333-4333-8333-333333333333';
const T = '44444444-4444-4444-8444-444444444444';
const at = '2025-01-01T00:00:00.000Z';

class History {
  events: AuditedEvent[] = [];
  private versions = new Map<string, number>();
  private wallets = new Map<string, W.WalletState>();
  private position = 0n;

  clone(): History {
    const c = new History();
    c.events = structuredClone(this.events);
    c.versions = new Map(this.versions);
    c.wallets = new Map(this.wallets);
    c.position = this.position;
    return c;
  }

  add(streamId: string, type: string, data: Record<string, unknown>): this {
    const version = (this.versions.get(streamId) ?? 0) + 1;
    this.versions.set(streamId, version);
    this.events.push({ streamId, version, position: ++this.position, type, data });
    return this;
  }

  /** Decides on the wallet's current state and records what it decided. */
  wallet(currency: string, decide: (s: W.WalletState, target: { merchantId: string; currency: string; at: string }) => W.WalletEvent[]): this {
    const id = `wallet-${M}-${currency}`;
    let state = this.wallets.get(id) ?? W.walletDecider.initialState();
    for (const e of decide(state, { merchantId: M, currency, at })) {
      state = W.walletDecider.evolve(state, e);
      this.add(id, e.type, e.data as unknown as Record<string, unknown>);
    }
    this.wallets.set(id, state);
    return this;
  }
}

const payinCreated = (id: string, status: 'completed' | 'failed' | 'pending') => {
  const h: Array<[string, Record<string, unknown>]> = [
    ['payin.created', {
      payin_id: id, merchant_id: M, customer_id: Q, quote_id: Q, send_amount: '5000', send_currency: 'XAF', receive_amount: '4925',
      receive_currency: 'XAF', total_fee: '75', country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money',
      source: {}, pricing: {}, wallet_impact: { effects: [] }, metadata: {}, otp_required: false, otp_supplied: false, at,
    }],
    ['payin.pending', { reason: null, at }],
  ];
  if (status === 'completed') h.push(['payin.completed', { provider_reference: 'X', at }]);
  if (status === 'failed') h.push(['payin.failed', { reason: 'INSUFFICIENT_FUNDS', provider_reference: 'X', at }]);
  return h;
};

const payoutEvents = (id: string, status: 'completed' | 'failed' | 'pending') => {
  const h: Array<[string, Record<string, unknown>]> = [
    ['payout.created', {
      payout_id: id, merchant_id: M, customer_id: Q, quote_id: Q, send_amount: '10000', send_currency: 'XOF', receive_amount: '9900',
      receive_currency: 'XOF', total_fee: '100', country_code: 'SN', operator_code: 'SN_WAVE_MOMO', rail_type: 'mobile_money',
      recipient: {}, payment_reason_text: 'x', pricing: {}, wallet_impact: { effects: [] }, metadata: {}, hold_id: id, at,
    }],
    ['payout.pending', { reason: null, at }],
  ];
  if (status === 'completed') h.push(['payout.completed', { provider_reference: 'X', at }]);
  if (status === 'failed') h.push(['payout.failed', { reason: 'RECIPIENT_NOT_FOUND', provider_reference: 'X', at }]);
  return h;
};

/** A sound day: a top-up, a completed payin credited once, a completed payout posted, a failed one released. */
function soundDay(): History {
  const h = new History();
  h.wallet('XOF', (s, c) => W.topUp(s, { ...c, entryId: 'top-1', amount: 50_000n }));
  for (const [type, data] of payinCreated(P, 'completed')) h.add(`payin-${P}`, type, data);
  h.wallet('XAF', (s, c) => W.creditCollection(s, { ...c, creditId: P, gross: 5000n, fee: 75n, operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: P } }));
  const ok = 'a0000000-0000-4000-8000-000000000001';
  const ko = 'a0000000-0000-4000-8000-000000000002';
  for (const [type, data] of payoutEvents(ok, 'completed')) h.add(`payout-${ok}`, type, data);
  for (const [type, data] of payoutEvents(ko, 'failed')) h.add(`payout-${ko}`, type, data);
  h.wallet('XOF', (s, c) => W.hold(s, { ...c, holdId: ok, amount: 10_000n, reference: { type: 'payout', id: ok } }));
  h.wallet('XOF', (s, c) => W.hold(s, { ...c, holdId: ko, amount: 10_000n, reference: { type: 'payout', id: ko } }));
  h.wallet('XOF', (s, c) => W.postHold(s, { ...c, holdId: ok, fee: 100n, operatorCode: 'SN_WAVE_MOMO' }));
  h.wallet('XOF', (s, c) => W.releaseHold(s, { ...c, holdId: ko, reason: 'RECIPIENT_NOT_FOUND' }));
  return h;
}

function audit(events: AuditedEvent[]) {
  const a = new LedgerAudit();
  for (const e of events) a.add(e);
  return a.finish();
}

const only = (counts: Record<LedgerCheck, number>) => Object.entries(counts).filter(([, n]) => n > 0).map(([c]) => c).sort();

t.test('a sound history: no finding, totals conserved per currency', async (t) => {
  const r = audit(soundDay().events);
  t.same(r.findings, []);
  t.same(only(r.counts), []);
  t.same(r.summary.currencies, [
    { currency: 'XAF', merchant_balances: '4925', top_ups: '0', credited_net: '4925', posted_holds: '0', fees: '75', all_accounts: '0' },
    { currency: 'XOF', merchant_balances: '40000', top_ups: '50000', credited_net: '0', posted_holds: '10000', fees: '100', all_accounts: '0' },
  ]);
  t.match(r.summary, { payins: 1, payouts: 2, wallets: 2 });
});

/** The sound day with the event at `index` replaced by `forge(event)`. */
function forged(pick: (e: AuditedEvent) => boolean, forge: (data: any) => void) {
  const events = soundDay().events.map((e) => ({ ...e, data: structuredClone(e.data) }));
  const target = events.find(pick)!;
  forge(target.data);
  return audit(events);
}

t.test('an entry that does not balance', async (t) => {
  const r = forged((e) => e.type === 'wallet.topped_up', (d) => { d.postings[0].amount = '49999'; });
  t.ok(r.counts.entry_balanced >= 1);
  t.match(r.findings.find((f) => f.check === 'entry_balanced'), { message: /debits 49999, credits 50000/, stream: `wallet-${M}-XOF`, position: '1' });
  t.ok(r.counts.conservation >= 1, 'and the currency no longer sums to zero');
});

t.test('postings that balance but say something else than the movement', async (t) => {
  const r = forged((e) => e.type === 'wallet.credited', (d) => {
    d.postings = [
      { account: 'provider:CM_MTN_MOMO', side: 'debit', amount: '5000' },
      { account: `merchant:${M}:available`, side: 'credit', amount: '5000' },
    ];
    d.balances.available = '5000';
  });
  t.same(only(r.counts), ['conservation', 'entry_amounts']);
  t.match(r.findings.find((f) => f.check === 'conservation'), { message: /XAF: merchants hold 5000, but top-ups 0 \+ credited 4925/ });
});

t.test('balances stated wrong, and a balance below zero', async (t) => {
  const wrong = forged((e) => e.type === 'wallet.funds_held', (d) => { d.balances.available = '45000'; });
  t.same(only(wrong.counts), ['stated_balances']);
  t.match(wrong.findings[0], { message: /states available 45000, reserved 10000; the postings give 40000, 10000/ });

  const h = new History();
  h.wallet('XOF', (s, c) => W.topUp(s, { ...c, entryId: 'top-1', amount: 1000n }));
  h.add(`wallet-${M}-XOF`, 'wallet.funds_held', {
    merchant_id: M, currency: 'XOF', at, hold_id: 'h', amount: '2000', reference: { type: 'top_up', id: 'x' },
    postings: [{ account: `merchant:${M}:available`, side: 'debit', amount: '2000' }, { account: `merchant:${M}:reserved`, side: 'credit', amount: '2000' }],
    balances: { available: '-1000', reserved: '2000' },
  });
  const r = audit(h.events);
  t.same(only(r.counts), ['non_negative']);
  t.match(r.findings[0], { message: /available -1000/, position: '2' });
});

t.test('money moved twice, or not as the payment says', async (t) => {
  // The same credit recorded twice (a redelivered settlement that was not deduplicated).
  const twice = soundDay();
  const credit = twice.events.find((e) => e.type === 'wallet.credited')!;
  const doubled = { ...structuredClone(credit.data) as any };
  doubled.balances = { available: '9850', reserved: '0' };
  twice.add(credit.streamId, 'wallet.credited', doubled);
  const r1 = audit(twice.events);
  t.same(only(r1.counts), ['movement_once']);
  t.match(r1.findings[0], { message: `credit ${P} recorded 2 times` });

  // A completed payin never credited; a failed payin credited.
  const h = new History();
  for (const [type, data] of payinCreated(P, 'completed')) h.add(`payin-${P}`, type, data);
  const failed = 'b0000000-0000-4000-8000-000000000001';
  for (const [type, data] of payinCreated(failed, 'failed')) h.add(`payin-${failed}`, type, { ...data, ...(type === 'payin.created' ? { payin_id: failed } : {}) });
  h.wallet('XAF', (s, c) => W.creditCollection(s, { ...c, creditId: failed, gross: 5000n, fee: 75n, operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: failed } }));
  const r2 = audit(h.events);
  t.same(only(r2.counts), ['payment_money']);
  t.same(r2.findings.filter((f) => f.check === 'payment_money').map((f) => f.message).sort(), [
    `payin ${P} was collected but ${P} was never credited`,
    `payin ${failed} was not collected but ${failed} was credited 4925`,
  ]);

  // A post whose stated fee is not what its postings took.
  const feeForged = forged((e) => e.type === 'wallet.hold_posted', (d) => { d.fee = '0'; });
  t.ok(feeForged.counts.entry_amounts >= 1, 'the postings do not say what the movement says');

  // A completed payout whose hold was released instead of posted.
  const h3 = new History();
  const po = 'c0000000-0000-4000-8000-000000000001';
  for (const [type, data] of payoutEvents(po, 'completed')) h3.add(`payout-${po}`, type, { ...data, ...(type === 'payout.created' ? { payout_id: po, hold_id: po } : {}) });
  h3.wallet('XOF', (s, c) => W.topUp(s, { ...c, entryId: 'top', amount: 20_000n }));
  h3.wallet('XOF', (s, c) => W.hold(s, { ...c, holdId: po, amount: 10_000n, reference: { type: 'payout', id: po } }));
  h3.wallet('XOF', (s, c) => W.releaseHold(s, { ...c, holdId: po, reason: null }));
  const r3 = audit(h3.events);
  t.same(only(r3.counts), ['payment_money']);
  t.match(r3.findings[0], { message: `payout ${po}: hold ${po} is released, its state says posted` });
});

t.test('transfers: the collection credited once, the first disbursement held at create and released when the collection fails', async (t) => {
  const h = new History();
  h.wallet('XOF', (s, c) => W.topUp(s, { ...c, entryId: 'top', amount: 20_000n }));
  h.add(`transfer-${T}`, 'transfer.created', {
    transfer_id: T, merchant_id: M, customer_id: Q, quote_id: Q, payin_amount: '10000', payin_currency: 'XAF', payout_amount: '9800',
    payout_currency: 'XOF', total_fee: '200', corridor_code: 'CM-SN-XAF-XOF', corridor_type: 'cross_border', payer_operator_code: 'CM_MTN_MOMO',
    recipient_operator_code: 'SN_WAVE_MOMO', payer: { phone: '+237670000001' }, recipient: {}, pricing: {}, wallet_impact: {},
    payment_reason_code: null, sender_source_of_funds: null, sender_occupation: null, metadata: {}, otp_required: false, at,
  });
  h.wallet('XOF', (s, c) => W.hold(s, { ...c, holdId: payoutReference(T, 1), amount: 9800n, reference: { type: 'transfer', id: T } }));
  h.add(`transfer-${T}`, 'transfer.collection_started', { leg_reference: collectionReference(T), operator_code: 'CM_MTN_MOMO', phone: '+237670000001', amount: '10000', currency: 'XAF', otp: false, at });
  t.same(only(audit(h.events).counts), [], 'collecting: held, nothing else');

  const failed = h.clone();
  failed.add(`transfer-${T}`, 'transfer.payin.failed', { reason: 'INSUFFICIENT_FUNDS', at });
  const r = audit(failed.events);
  t.same(only(r.counts), ['payment_money'], 'the collection failed but the hold was not released');
  t.match(r.findings[0], { message: /hold transfer:.*:payout:1 is still held, its state says released/ });
});

t.test('stream order, unknown references, unknown wallet events', async (t) => {
  const h = soundDay();
  const events = h.events.map((e) => ({ ...e }));
  events[3] = { ...events[3]!, version: events[3]!.version + 1 };
  events.push({ streamId: `wallet-${M}-XOF`, version: 99, position: 1n, type: 'wallet.mystery', data: { merchant_id: M, currency: 'XOF', postings: [], balances: { available: '40000', reserved: '0' } } });
  const ghost = 'd0000000-0000-4000-8000-000000000001';
  const h2 = new History();
  h2.wallet('XOF', (s, c) => W.topUp(s, { ...c, entryId: 'top', amount: 20_000n }));
  h2.wallet('XOF', (s, c) => W.hold(s, { ...c, holdId: ghost, amount: 1000n, reference: { type: 'payout', id: ghost } }));
  const r = audit(events);
  t.ok(r.counts.stream_order >= 2, 'a skipped version and a position going back');
  t.ok(r.counts.entry_balanced >= 1, 'an unknown wallet event with no postings');
  t.same(only(audit(h2.events).counts), ['orphan_movement']);
});

t.test('findings are bounded per check, counts are not', async (t) => {
  const h = new History();
  for (let i = 0; i < 250; i++) {
    h.add(`wallet-${M}-XOF`, 'wallet.topped_up', {
      merchant_id: M, currency: 'XOF', at, entry_id: `e${i}`, amount: '10', reference: { type: 'top_up', id: `e${i}` },
      postings: [{ account: 'platform:funding', side: 'debit', amount: '10' }, { account: `merchant:${M}:available`, side: 'credit', amount: '11' }],
      balances: { available: String(11 * (i + 1)), reserved: '0' },
    });
  }
  const r = audit(h.events);
  t.equal(r.counts.entry_balanced, 250);
  t.equal(r.findings.filter((f) => f.check === 'entry_balanced').length, 100);
});
