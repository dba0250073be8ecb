// Payment outcomes waiting for one merchant's wallet are decided together, in one append
// (commands/wallet-settlements.ts, bench issue 8): each payin is completed and credited exactly once,
// its completion before its credit, the wallet's balance is the sum of the credits; two outcomes for
// one payin never share a batch; a batch that fails is settled one by one, so a payin that fails
// does so alone; a wallet moved by another process meanwhile is read again; payouts' holds are
// posted or released in the same batches as payins' credits.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import type { MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, party, quote, topUp, until, wallet } from './helpers/money.ts';
import { settlePayin } from '../commands/payins.ts';
import { settlePayout } from '../commands/payouts.ts';
import { streams } from '../commands/streams.ts';
import * as W from '../domain/wallet.ts';
import type { EventStore, StreamAppend } from '../infra/eventstore/types.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;
const meta = { actor: 'test' };

/** n payins of 5,000 XAF that stay pending at the sandbox (phone …98), each submitted to it. */
async function pendingPayins(m: MerchantCreds, n: number): Promise<string[]> {
  const customer = await newCustomer(h, m);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('CM_MTN_MOMO', 'CM', 'XAF', '5000') });
    const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000098') }, { idem: true });
    if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
    ids.push(p.body.id);
  }
  // The gateway has recorded each submission: the outcomes below are the only settlement.
  await until('submitted', async () => (await Promise.all(ids.map((id) => h.as(m, 'GET', `/payins/${id}`))))
    .every((r) => r.body.provider_reference));
  return ids;
}

/** Watches the store's appends (the real store, its calls counted) until the teardown. */
function watchAppends(t: { teardown(fn: () => void): void }, fault?: (appends: StreamAppend[]) => Error | undefined): StreamAppend[][] {
  const calls: StreamAppend[][] = [];
  const store = s.store as EventStore;
  const original = store.append.bind(store);
  store.append = async (appends, opts) => {
    calls.push(appends);
    const err = fault?.(appends);
    if (err) throw err;
    return original(appends, opts);
  };
  t.teardown(() => { store.append = original; });
  return calls;
}

const touching = (calls: StreamAppend[][], streamId: string) => calls.filter((c) => c.some((a) => a.streamId === streamId && a.events.length > 0));
const completed = { outcome: 'completed' as const, providerReference: 'SBX-TEST' };

t.test('outcomes for one wallet arriving together: one append, each payin credited once, in order', async (t) => {
  const m = await h.newMerchant('Batched');
  const ids = await pendingPayins(m, 12);
  const walletStream = streams.wallet(m.merchantId, 'XAF');
  const calls = watchAppends(t);
  const positions = await Promise.all(ids.map((id) => settlePayin(s, id, completed, meta)));
  t.ok(positions.every((p) => typeof p === 'bigint'), 'each payin was written');
  const walletAppends = touching(calls, walletStream);
  t.ok(walletAppends.length < ids.length, `${walletAppends.length} appends to the wallet for ${ids.length} outcomes`);
  t.ok(walletAppends.some((c) => c.filter((a) => a.streamId.startsWith('payin-')).length > 1), 'several payins in one append');

  const events = (await s.store.readAll(0n, 100_000)).filter((e) => e.streamId === walletStream || ids.some((id) => e.streamId === streams.payin(id)));
  const credits = events.filter((e) => e.type === 'wallet.credited');
  t.same(credits.map((e) => e.data.credit_id).sort(), [...ids].sort(), 'each payin credited once');
  for (const id of ids) {
    const done = events.findIndex((e) => e.type === 'payin.completed' && e.streamId === streams.payin(id));
    const credit = events.findIndex((e) => e.type === 'wallet.credited' && e.data.credit_id === id);
    t.ok(done >= 0 && done < credit, `payin ${id.slice(0, 8)} completed before its credit`);
  }
  const versions = credits.map((e) => e.version);
  t.same(versions, [...versions].sort((a, b) => a - b), 'the credits in the wallet stream in order');
  t.ok(await s.projector.waitFor(positions.reduce((a, b) => (b! > a! ? b : a))!));
  t.match(await wallet(h, m, 'XAF'), { available: String(4925 * ids.length), reserved: '0' }, 'the balance is the sum of the credits');

  const again = await Promise.all(ids.map((id) => settlePayin(s, id, completed, meta)));
  t.same(again, ids.map(() => undefined), 'the same outcomes again: nothing written');
});

t.test('two outcomes for one payin in a burst: the first decides, in a batch of its own turn', async (t) => {
  const m = await h.newMerchant('Duplicates');
  const ids = await pendingPayins(m, 3);
  const [a, b, c] = ids as [string, string, string];
  const failed = { outcome: 'failed' as const, providerReference: 'SBX-TEST', reason: 'declined' };
  const answers = await Promise.all([
    settlePayin(s, a, completed, meta), settlePayin(s, b, completed, meta), settlePayin(s, a, failed, meta), settlePayin(s, c, failed, meta),
  ]);
  t.type(answers[0], 'bigint');
  t.type(answers[1], 'bigint');
  t.equal(answers[2], undefined, 'the later outcome for the same payin finds it settled');
  t.type(answers[3], 'bigint');
  // settlePayin answers the append's position and leaves read-your-writes to its caller (as the
  // gateway does); the read models are read below, so wait for them to include the settlements.
  for (const position of answers) await s.awaitReadModels(position);
  const status = async (id: string) => (await h.as(m, 'GET', `/payins/${id}`)).body.status;
  t.same([await status(a), await status(b), await status(c)], ['completed', 'completed', 'failed']);
  const credits = (await s.store.readStream(streams.wallet(m.merchantId, 'XAF'))).filter((e) => e.type === 'wallet.credited');
  t.same(credits.map((e) => e.data.credit_id).sort(), [a, b].sort(), 'credited once each; the failed payin not at all');
});

t.test('a batch that fails is settled one by one: the payin that fails does so alone', async (t) => {
  const m = await h.newMerchant('Poisoned batch');
  const ids = await pendingPayins(m, 5);
  const poison = streams.payin(ids[2]!);
  const calls = watchAppends(t, (appends) => (appends.some((a) => a.streamId === poison) ? new Error('injected: this payin cannot be written') : undefined));
  const answers = await Promise.allSettled(ids.map((id) => settlePayin(s, id, completed, meta)));
  t.same(answers.map((x) => x.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  t.match((answers[2] as PromiseRejectedResult).reason, { message: /injected/ });
  t.ok(calls.some((c) => c.filter((a) => a.streamId.startsWith('payin-')).length === ids.length), 'tried as one batch first');
  const credits = (await s.store.readStream(streams.wallet(m.merchantId, 'XAF'))).filter((e) => e.type === 'wallet.credited');
  t.same(credits.map((e) => e.data.credit_id).sort(), ids.filter((_, i) => i !== 2).sort(), 'the others credited once each');
  t.equal((await s.store.readStream(poison)).some((e) => e.type === 'payin.completed'), false, 'nothing of the failing payin written');
});

t.test("another process's credit appended meanwhile: the batch is decided again on the wallet as it is", async (t) => {
  const m = await h.newMerchant('Moved wallet');
  const ids = await pendingPayins(m, 4);
  const walletStream = streams.wallet(m.merchantId, 'XAF');
  await settlePayin(s, ids[0]!, completed, meta); // this process caches the wallet
  // What another process settling payin 1 would append, behind this process's cache.
  const tail = await s.store.readStream(walletStream);
  const state = tail.reduce((st, e) => W.walletDecider.evolve(st, { type: e.type, data: e.data } as unknown as W.WalletEvent), W.walletDecider.initialState());
  const elsewhere = W.creditCollection(state, {
    merchantId: m.merchantId, currency: 'XAF', at: new Date().toISOString(), creditId: 'other-process-credit', gross: 1000n, fee: 10n,
    operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: 'other-process-credit' },
  });
  await s.store.append([{ streamId: walletStream, expectedVersion: tail.length, events: elsewhere.map((e) => ({ type: e.type, data: e.data as unknown as Record<string, unknown>, metadata: meta })) }]);
  const calls = watchAppends(t);
  const positions = await Promise.all(ids.slice(1).map((id) => settlePayin(s, id, completed, meta)));
  t.ok(positions.every((p) => typeof p === 'bigint'));
  t.ok(touching(calls, walletStream).length >= 2, 'the first attempt conflicted and was decided again');
  const credits = (await s.store.readStream(walletStream)).filter((e) => e.type === 'wallet.credited');
  t.same(credits.map((e) => e.data.credit_id).sort(), [...ids, 'other-process-credit'].sort(), 'every credit once');
  t.ok(await s.projector.waitFor(positions.reduce((a, b) => (b! > a! ? b : a))!));
  t.match(await wallet(h, m, 'XAF'), { available: String(4925 * ids.length + 990) });
});

t.test("payouts and payins of one wallet settled together: holds posted or released, credits, once each", async (t) => {
  const m = await h.newMerchant('Mixed wallet');
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  await topUp(h, m, 'XOF', '100000');
  const recipient = { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000098', recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' };
  const payouts: string[] = [];
  for (let i = 0; i < 4; i++) {
    const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '10000'));
    const p = await h.as(m, 'POST', '/payouts', { quote_id: q.id, customer_id: customer, payment_reason_text: 'Invoice', recipient }, { idem: true });
    if (p.status !== 201) throw new Error(`payout failed: ${p.status} ${p.text}`);
    payouts.push(p.body.id);
  }
  const payins: string[] = [];
  for (let i = 0; i < 2; i++) {
    const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000') });
    const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_WAVE_MOMO', '+221770000098') }, { idem: true });
    if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
    payins.push(p.body.id);
  }
  await until('submitted', async () => (await Promise.all([
    ...payouts.map((id) => h.as(m, 'GET', `/payouts/${id}`)), ...payins.map((id) => h.as(m, 'GET', `/payins/${id}`)),
  ])).every((r) => r.body.provider_reference));
  t.match(await wallet(h, m, 'XOF'), { available: '60000', reserved: '40000' }, 'four holds');

  const walletStream = streams.wallet(m.merchantId, 'XOF');
  const calls = watchAppends(t);
  const failed = { outcome: 'failed' as const, providerReference: 'SBX-TEST', reason: 'recipient not found' };
  const positions = await Promise.all([
    settlePayout(s, payouts[0]!, completed, meta), settlePayin(s, payins[0]!, completed, meta), settlePayout(s, payouts[1]!, failed, meta),
    settlePayout(s, payouts[2]!, completed, meta), settlePayin(s, payins[1]!, completed, meta), settlePayout(s, payouts[3]!, completed, meta),
  ]);
  t.ok(positions.every((p) => typeof p === 'bigint'), 'each payment was written');
  t.ok(touching(calls, walletStream).length < positions.length, `${touching(calls, walletStream).length} appends to the wallet for ${positions.length} outcomes`);
  t.ok(touching(calls, walletStream).some((c) => c.filter((a) => a.streamId.startsWith('payout-')).length > 1 && c.some((a) => a.streamId.startsWith('payin-'))),
    'payouts and payins in one append');

  const events = (await s.store.readStream(walletStream)).slice(-6);
  t.same(events.map((e) => e.type).sort(), ['wallet.credited', 'wallet.credited', 'wallet.hold_posted', 'wallet.hold_posted', 'wallet.hold_posted', 'wallet.hold_released'].sort());
  const net = events.filter((e) => e.type === 'wallet.credited').reduce((a, e) => a + BigInt(e.data.net_amount as string), 0n);
  t.ok(await s.projector.waitFor(positions.reduce((a, b) => (b! > a! ? b : a))!));
  t.match(await wallet(h, m, 'XOF'), { available: String(60000n + 10000n + net), reserved: '0' }, 'the failed payout released, the others posted, the payins credited');
});
