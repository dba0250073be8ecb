// Top-ups happen once by their own stream (issue 32): the wallet keeps no top-up ids, so the
// operator's Idempotency-Key names a `topup-<id>` stream appended with the wallet's credit at
// expected version 0. The same key twice, or concurrently, credits once and answers the same entry;
// two keys credit twice; the same key with another amount is a conflict; no key is a new top-up.
import t from 'tap';
import { ADMIN_TOKEN, request, startTestApp } from './helpers/app.ts';
import { wallet } from './helpers/money.ts';
import { streams } from '../commands/streams.ts';
import { topUpIdFor } from '../commands/wallets.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const topUp = (merchantId: string, currency: string, amount: string, key?: string) => request(h.url, 'POST', `/admin/merchants/${merchantId}/wallets/${currency}/top-ups`, {
  body: { amount }, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(key === undefined ? {} : { 'idempotency-key': key }) },
});

/** The wallet's top-up events (the ledger's own record, not a read model). */
async function toppedUp(merchantId: string, currency: string) {
  return (await s.store.readStream(streams.wallet(merchantId, currency))).filter((e) => e.type === 'wallet.topped_up');
}

t.test('the same key twice: one credit, the same entry answered as a replay', async (t) => {
  const m = await h.newMerchant('TopUpOnce');
  const first = await topUp(m.merchantId, 'XOF', '5000', 'fund-1');
  t.equal(first.status, 201);
  t.match(first.body, { merchant_id: m.merchantId, currency: 'XOF', amount: '5000', type: 'top_up', _meta: { idempotency_key: 'fund-1', idempotency_replayed: false } });
  t.equal(first.body.id, topUpIdFor(m.merchantId, 'fund-1'), 'the key names the top-up');
  const again = await topUp(m.merchantId, 'XOF', '5000.00', 'fund-1');
  t.equal(again.status, 201);
  t.same({ ...again.body, _meta: undefined }, { ...first.body, _meta: undefined }, 'the same entry, created_at included');
  t.same(again.body._meta, { idempotency_key: 'fund-1', idempotency_replayed: true });
  t.equal((await toppedUp(m.merchantId, 'XOF')).length, 1, 'credited once');
  t.match(await wallet(h, m, 'XOF'), { available: '5000' });
  const stream = await s.store.readStream(streams.topUp(first.body.id));
  t.same(stream.map((e) => [e.type, e.data.amount, e.data.idempotency_key]), [['top_up.recorded', '5000', 'fund-1']], 'its own stream, one event');
});

t.test('two keys: two credits; no key: a new top-up each call', async (t) => {
  const m = await h.newMerchant('TopUpTwice');
  const a = await topUp(m.merchantId, 'XAF', '1000', 'a');
  const b = await topUp(m.merchantId, 'XAF', '1000', 'b');
  t.not(a.body.id, b.body.id);
  const c = await topUp(m.merchantId, 'XAF', '1000');
  const d = await topUp(m.merchantId, 'XAF', '1000');
  t.equal(c.body._meta, undefined, 'no key, no _meta');
  t.not(c.body.id, d.body.id);
  t.equal((await toppedUp(m.merchantId, 'XAF')).length, 4);
  t.match(await wallet(h, m, 'XAF'), { available: '4000' });
});

t.test('the same key concurrently: one credit, every answer the same entry', async (t) => {
  const m = await h.newMerchant('TopUpRace');
  const answers = await Promise.all(Array.from({ length: 8 }, () => topUp(m.merchantId, 'XOF', '2000', 'race')));
  t.same(answers.map((r) => r.status), Array(8).fill(201));
  t.equal(new Set(answers.map((r) => r.body.id)).size, 1, 'one entry');
  t.equal(answers.filter((r) => !r.body._meta.idempotency_replayed).length, 1, 'one recorded it, the others replay it');
  t.equal((await toppedUp(m.merchantId, 'XOF')).length, 1, 'credited once');
  t.match(await wallet(h, m, 'XOF'), { available: '2000' });
});

t.test('the same key with another amount or currency: 409 idempotency_conflict; keys are per merchant; a bad key is a 400', async (t) => {
  const m = await h.newMerchant('TopUpConflict');
  const other = await h.newMerchant('TopUpOther');
  t.equal((await topUp(m.merchantId, 'XOF', '3000', 'k')).status, 201);
  const amount = await topUp(m.merchantId, 'XOF', '4000', 'k');
  t.equal(amount.status, 409);
  t.equal(amount.body.error.code, 'idempotency_conflict');
  t.equal((await topUp(m.merchantId, 'XAF', '3000', 'k')).body.error.code, 'idempotency_conflict', 'another currency');
  const elsewhere = await topUp(other.merchantId, 'XOF', '3000', 'k');
  t.equal(elsewhere.status, 201, 'the same key on another merchant is another top-up');
  t.equal(elsewhere.body._meta.idempotency_replayed, false);
  t.match(await wallet(h, m, 'XOF'), { available: '3000' });
  t.match(await wallet(h, m, 'XAF'), { available: '0' });
  const bad = await topUp(m.merchantId, 'XOF', '3000', 'a\x01b'.replace('\x01', '\u00e9'));
  t.equal(bad.status, 400);
  t.same(bad.body.error.details?.map((x: { field: string }) => x.field), ['Idempotency-Key']);
});
