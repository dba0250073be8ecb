// POST /payouts/bulk and GET /payouts/bulk/{id} (CONTRACT §10) over HTTP: 100 items in one request;
// per-item outcomes as each item's own POST /payouts would give them (one refusal never stops
// another); a schema error anywhere (a repeated reference, 101 items, a malformed item) refuses the
// whole batch and changes nothing; the key replays the batch (409 on another body); a retry of the
// same batch id never pays an item twice; GET shows each payout's current status, 404 to another
// merchant; a batch racing single payouts on one wallet never takes it below zero. Runs on the
// embedded PostgreSQL and in-process bus, and on the external PostgreSQL and NATS (test/lanes.ts).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, quote, settled, topUp, until, wallet } from './helpers/money.ts';
import { batchPayoutId, createPayoutBatch } from '../commands/payouts-bulk.ts';
import type { Recipient } from '../domain/payment.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { runAudit } from '../projections/finance-audit.ts';
import { projections } from '../app/registry.ts';
import { responseChecker } from './helpers/openapi-responses.ts';
import { Aggregates } from '../commands/aggregates.ts';
import { topUp as topUpCommand } from '../commands/wallets.ts';
import { payoutBatchesProjection } from '../projections/payout-batches.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const recipient = (phone: string) => ({
  country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye',
});
const item = (reference: string, customer: string, quoteId: string, phone = '+221770000098') => ({
  reference, quote_id: quoteId, customer_id: customer, payment_reason_text: 'Supplier invoice', recipient: recipient(phone), metadata: { ref: reference },
});
const quotes = (m: MerchantCreds, n: number, amount = '1000') =>
  Promise.all(Array.from({ length: n }, () => quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', amount))));
const bulk = (m: MerchantCreds, items: unknown[], idem: string | boolean = true) => h.as(m, 'POST', '/payouts/bulk', { items }, { idem });
const quoteStatus = async (m: MerchantCreds, id: string) => (await h.as(m, 'GET', `/quotes/${id}`)).body.status as string;

async function setup(balance: string) {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  await topUp(h, m, 'XOF', balance);
  return { m, customer };
}

t.test('100 items in one request: each a payout with its own quote consumed and its own hold', async (t) => {
  const { m, customer } = await setup('100000');
  const qs = await quotes(m, 100);
  const r = await bulk(m, qs.map((q, i) => item(`INV-${i}`, customer, q.id)));
  t.equal(r.status, 201, r.text);
  t.match(r.body, { id: String, created_at: String, _meta: { idempotency_replayed: false } });
  t.equal(r.body.items.length, 100);
  t.ok(r.body.items.every((x: any, i: number) => x.reference === `INV-${i}` && x.status === 201 && x.payout.quote_id === qs[i].id
    && x.payout.send_amount === '1000' && x.payout.metadata.ref === `INV-${i}` && x.error === undefined), 'every item created, in order');
  t.equal(new Set(r.body.items.map((x: any) => x.payout.id)).size, 100, 'a payout each');
  t.match(await wallet(h, m, 'XOF'), { available: '0', reserved: '100000' }, 'one hold per payout');
  t.equal(await quoteStatus(m, qs[42].id), 'consumed');
  const one = await h.as(m, 'GET', `/payouts/${r.body.items[7].payout.id}`);
  t.equal(one.status, 200);
  t.equal(one.body.id, r.body.items[7].payout.id, 'each payout readable on its own');
  const listed = await h.as(m, 'GET', '/payouts?limit=100');
  t.equal(listed.body.data.length, 100, 'and listed');
});

t.test('mixed outcomes: each item refused or created as its own POST /payouts would be', async (t) => {
  const { m, customer } = await setup('2500');
  const [q0, q1, q2, q3] = await quotes(m, 4);
  const other = await h.newMerchant('Other');
  const [foreign] = await quotes(other, 1);
  const r = await bulk(m, [
    item('ok-1', customer, q0!.id),
    item('no-customer', randomUUID(), q1!.id),
    item('foreign-quote', customer, foreign!.id),
    item('ok-2', customer, q1!.id),
    item('same-quote-again', customer, q0!.id),
    item('short', customer, q2!.id),
    item('wrong-party', customer, q3!.id, undefined),
  ].map((x, i) => (i === 6 ? { ...x, recipient: { ...x.recipient, operator_code: 'CI_ORANGE_MOMO', country_code: 'CI', phone: '+2250700000001' } } : x)));
  t.equal(r.status, 201, r.text);
  const by = Object.fromEntries(r.body.items.map((x: any) => [x.reference, x]));
  t.match(by['ok-1'], { status: 201, payout: { status: String, quote_id: q0!.id } });
  t.match(by['no-customer'], { status: 400, error: { error: { code: 'customer_not_found' } } });
  t.notOk(by['no-customer'].payout);
  t.match(by['foreign-quote'], { status: 400, error: { error: { code: 'quote_not_found' } } });
  t.match(by['ok-2'], { status: 201, payout: { quote_id: q1!.id } }, 'a quote another item could not use');
  t.match(by['same-quote-again'], { status: 400, error: { error: { code: 'quote_not_active' } } }, 'the quote an earlier item consumed');
  t.match(by['short'], { status: 400, error: { error: { code: 'insufficient_balance' } } }, 'the balance the earlier items left');
  t.equal(by['wrong-party'].status, 400, 'a recipient that does not match its quote');
  t.notOk(by['wrong-party'].payout);
  t.match(await wallet(h, m, 'XOF'), { available: '500', reserved: '2000' }, 'only the created payouts hold');
  t.equal(await quoteStatus(m, q2!.id), 'active', 'a refused item consumes nothing');
  t.equal(await quoteStatus(m, q3!.id), 'active');
  t.equal(await quoteStatus(other, foreign!.id), 'active');
  await topUp(h, m, 'XOF', '1000');
  const single = await h.as(m, 'POST', '/payouts', { ...item('x', customer, q2!.id), reference: undefined }, { idem: true });
  t.equal(single.status, 201, 'the refused item\'s quote still usable on its own');
});

t.test('a schema error anywhere refuses the whole batch and changes nothing', async (t) => {
  const { m, customer } = await setup('10000');
  const qs = await quotes(m, 3);
  const key = `bulk-${randomUUID()}`;
  const good = qs.map((q, i) => item(`r-${i}`, customer, q.id));
  const bad = await bulk(m, [good[0], { ...good[1], amount: '5' }, { ...good[2], recipient: undefined }], key);
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'bad_request');
  t.match(bad.body.error.details, [{ field: 'items.1.amount' }, { field: 'items.2.recipient' }]);
  const dup = await bulk(m, [good[0], good[1], { ...good[2], reference: 'r-0' }], key);
  t.equal(dup.status, 400, 'a repeated reference');
  t.match(dup.body.error, { code: 'bad_request', details: [{ field: 'items.2.reference', message: /unique/ }] });
  const tooMany = await bulk(m, Array.from({ length: 101 }, (_, i) => item(`n-${i}`, customer, qs[0]!.id)), key);
  t.equal(tooMany.status, 400, '101 items');
  t.match(tooMany.body.error, { code: 'bad_request', details: [{ field: 'items' }] });
  t.equal((await bulk(m, [], key)).status, 400, 'no item');
  t.match(await wallet(h, m, 'XOF'), { available: '10000', reserved: '0' }, 'nothing held');
  for (const q of qs) t.equal(await quoteStatus(m, q.id), 'active', 'no quote consumed');
  t.equal((await h.as(m, 'GET', '/payouts')).body.data.length, 0, 'no payout');
  const ok = await bulk(m, good, key);
  t.equal(ok.status, 201, 'the key was left free for the corrected batch');
  t.equal(ok.body.items.filter((x: any) => x.status === 201).length, 3);
});

t.test('the key replays the batch; another body under it is a conflict; a retried batch id pays nothing twice', async (t) => {
  const { m, customer } = await setup('3000');
  const qs = await quotes(m, 3);
  const items = [item('a', customer, qs[0]!.id), item('b', customer, qs[1]!.id), item('c', customer, qs[2]!.id, '+221770000001')];
  const key = `bulk-${randomUUID()}`;
  const first = await bulk(m, items, key);
  t.equal(first.status, 201);
  const again = await bulk(m, items, key);
  t.equal(again.status, 201);
  t.same({ ...again.body, _meta: undefined }, { ...first.body, _meta: undefined }, 'the same body');
  t.match(again.body._meta, { idempotency_key: key, idempotency_replayed: true });
  const conflict = await bulk(m, items.slice(0, 2), key);
  t.equal(conflict.status, 409);
  t.equal(conflict.body.error.code, 'idempotency_conflict');
  t.match(await wallet(h, m, 'XOF'), { available: '0', reserved: String }, 'held once');
  // A retry of the same batch id (a claim taken over after a crash or an in-doubt commit) finds it.
  const meta = { requestId: 'retry', actor: `merchant:${m.merchantId}` };
  const body = items.map((x) => ({ reference: x.reference, customerId: customer, quoteId: x.quote_id, recipient: x.recipient as Recipient, paymentReasonText: x.payment_reason_text, metadata: x.metadata }));
  const retried = await createPayoutBatch(s, { batchId: first.body.id, merchantId: m.merchantId, items: body }, meta);
  t.ok(retried.existed, 'answered as a replay');
  t.same(first.body.items.map((x: any) => x.payout.id), items.map((_, i) => batchPayoutId(first.body.id, i)), 'ids derived from the batch id and the index');
  t.same(retried.batch.items.map((x) => x.payout_id), first.body.items.map((x: any) => x.payout.id), 'the same payout ids');
  const w = await wallet(h, m, 'XOF');
  t.equal(BigInt(w.available) + BigInt(w.reserved) <= 3000n && BigInt(w.available) >= 0n, true, 'no second hold');
  t.equal((await h.as(m, 'GET', '/payouts')).body.data.length, 3, 'three payouts, not six');
});

t.test('GET /payouts/bulk/{id}: each payout as it is now; another merchant\'s batch is a 404', async (t) => {
  const { m, customer } = await setup('3000');
  const qs = await quotes(m, 3);
  const r = await bulk(m, [item('done', customer, qs[0]!.id, '+221770000001'), item('fails', customer, qs[1]!.id, '+221770000099'),
    item('refused', randomUUID(), qs[2]!.id)]);
  t.equal(r.status, 201);
  t.equal(r.body.items[0].payout.status, 'pending');
  await settled(h, m, 'payouts', r.body.items[0].payout.id, 'completed');
  await settled(h, m, 'payouts', r.body.items[1].payout.id, 'failed');
  const got = await h.as(m, 'GET', `/payouts/bulk/${r.body.id}`);
  t.equal(got.status, 200);
  t.match(got.body, { id: r.body.id, created_at: r.body.created_at });
  t.notOk(got.body._meta);
  t.match(got.body.items, [
    { reference: 'done', status: 201, payout: { id: r.body.items[0].payout.id, status: 'completed' } },
    { reference: 'fails', status: 201, payout: { id: r.body.items[1].payout.id, status: 'failed' } },
    { reference: 'refused', status: 400, error: { error: { code: 'customer_not_found' } } },
  ]);
  t.match(await wallet(h, m, 'XOF'), { available: '2000', reserved: '0' }, 'one posted, one released');
  const check = responseChecker((await h.as(m, 'GET', '/openapi.json')).body);
  for (const [method, path, answer] of [['POST', '/payouts/bulk', r], ['GET', `/payouts/bulk/${r.body.id}`, got]] as const) {
    const c = check({ method, path, status: answer.status, body: answer.body });
    t.same(c.problems, [], `${c.operationId}: the answer matches the document's schema`);
  }
  // The read model is rebuilt from the events alone, to the same rows and the same answer.
  const rows = () => s.knex('payout_batches').orderBy('id').select('id', 'merchant_id', 'created_at', 'body');
  const before = await rows();
  t.ok(before.length > 0);
  await rebuildProjection(s.knex, s.store, payoutBatchesProjection);
  t.same(await rows(), before, 'rebuilt from the events to the same rows');
  t.same((await h.as(m, 'GET', `/payouts/bulk/${r.body.id}`)).body, got.body, 'and the same answer');
  const other = await h.newMerchant('Other');
  t.equal((await h.as(other, 'GET', `/payouts/bulk/${r.body.id}`)).status, 404, 'another merchant\'s batch');
  t.equal((await h.as(m, 'GET', `/payouts/bulk/${randomUUID()}`)).status, 404);
  t.equal((await h.as(m, 'GET', '/payouts/bulk/not-a-uuid')).status, 404);
});

t.test('a read that finds the read models inconsistent answers 503 and the process goes on (CONTRACT §17)', async (t) => {
  const { m, customer } = await setup('1000');
  const [q] = await quotes(m, 1);
  const r = await bulk(m, [item('one', customer, q!.id)]);
  t.equal(r.status, 201);
  const payoutId = r.body.items[0].payout.id as string;
  // Its leg stays pending (phone ending 98): once submitted, nothing more is projected onto its row.
  await until('the payout submitted to the provider', async () => (await h.as(m, 'GET', `/payouts/${payoutId}`)).body.provider_reference);
  // As an online rebuild of one projection leaves it for a moment: the batch's payout not yet in its table.
  const row = await s.knex('payouts').where({ id: payoutId }).first();
  await s.knex('payouts').where({ id: payoutId }).delete();
  t.teardown(() => s.knex('payouts').insert(row).onConflict('id').ignore());
  let stopping = 0;
  const onSigterm = () => { stopping++; };
  process.on('SIGTERM', onSigterm);
  t.teardown(() => { process.off('SIGTERM', onSigterm); });
  const got = await h.as(m, 'GET', `/payouts/bulk/${r.body.id}`);
  t.equal(got.status, 503, got.text);
  t.match(got.body.error, { code: 'service_unavailable' });
  t.ok(got.headers.get('retry-after'), 'with Retry-After');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(stopping, 0, 'a read never stops the process');
  await s.knex('payouts').insert(row).onConflict('id').ignore();
  t.equal((await h.as(m, 'GET', `/payouts/bulk/${r.body.id}`)).status, 200, 'answered once the read model has it again');
});

t.test('a batch racing single payouts on one wallet never takes it below zero', async (t) => {
  const { m, customer } = await setup('10000');
  const [forBatch, forSingles] = await Promise.all([quotes(m, 10), quotes(m, 10)]);
  const [batch, ...singles] = await Promise.all([
    bulk(m, forBatch.map((q, i) => item(`b-${i}`, customer, q.id))),
    ...forSingles.map((q) => h.as(m, 'POST', '/payouts', { ...item('', customer, q.id), reference: undefined }, { idem: true })),
  ]);
  t.equal(batch!.status, 201);
  const created = batch!.body.items.filter((x: any) => x.status === 201).length + singles.filter((x) => x.status === 201).length;
  const refused = [...batch!.body.items.filter((x: any) => x.status !== 201).map((x: any) => x.error.error.code),
    ...singles.filter((x) => x.status !== 201).map((x) => x.body.error.code)];
  t.equal(created, 10, 'exactly what the balance covers');
  t.ok(refused.every((c) => c === 'insufficient_balance'), 'the others refused for the balance');
  t.match(await wallet(h, m, 'XOF'), { available: '0', reserved: '10000' });
  await until('ledger', async () => {
    const rows = await s.knex('ledger_entries').where({ account: `merchant:${m.merchantId}:available` }).select('side', 'amount');
    const net = rows.reduce((a: bigint, e: any) => a + (e.side === 'credit' ? BigInt(e.amount) : -BigInt(e.amount)), 0n);
    return net === 0n;
  });
});

t.test('a refusal decided on a lagging cache is confirmed on fresh state before it stands', async (t) => {
  const { m, customer } = await setup('1000');
  const qs = await quotes(m, 3);
  t.equal((await bulk(m, [item('warm', customer, qs[0]!.id)])).body.items[0].status, 201, 'this process has the wallet cached (now empty)');
  // Another process tops the wallet up: its own aggregates, so this process's cached wallet lags.
  const elsewhere = { ...s, aggregates: new Aggregates(s.store) };
  await topUpCommand(elsewhere, { merchantId: m.merchantId, currency: 'XOF', amount: '2000', idempotencyKey: undefined }, { requestId: 'elsewhere', actor: 'test' });
  const r = await bulk(m, [item('one', customer, qs[1]!.id), item('two', customer, qs[2]!.id)]);
  t.same(r.body.items.map((x: any) => x.status), [201, 201], 'not refused for a balance the store no longer has');
  await until('projected', async () => (await wallet(h, m, 'XOF')).reserved === '3000');
  t.match(await wallet(h, m, 'XOF'), { available: '0', reserved: '3000' });
});

t.test('a batch whose commit is in doubt: 503, then the retry answers that batch (replayed), each payout once', async (t) => {
  const { m, customer } = await setup('5000');
  const qs = await quotes(m, 3);
  const items = [item('x', customer, qs[0]!.id), item('y', customer, qs[1]!.id), item('z', randomUUID(), qs[2]!.id)];
  // The next append of a batch commits, then fails as a dropped connection does.
  const store = s.store;
  const original = store.append;
  let left = 1;
  store.append = async (appends, opts) => {
    const result = await original.call(store, appends, opts);
    if (left > 0 && appends.some((a) => a.events.some((e) => e.type === 'payout_batch.created'))) {
      left -= 1;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return result;
  };
  t.teardown(() => { store.append = original; });
  const key = `in-doubt-${randomUUID()}`;
  const first = await bulk(m, items, key);
  store.append = original;
  t.equal(first.status, 503, 'in doubt: retry the same request');
  const retry = await bulk(m, items, key);
  t.equal(retry.status, 201, retry.text.slice(0, 200));
  t.match(retry.body._meta, { idempotency_key: key, idempotency_replayed: true }, 'answered as a replay');
  const claim = await s.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).first();
  t.equal(retry.body.id, claim.resource_id, 'the batch the first attempt committed');
  t.same(retry.body.items.map((x: any) => [x.reference, x.status, x.payout?.id ?? x.error.error.code]),
    [['x', 201, batchPayoutId(retry.body.id, 0)], ['y', 201, batchPayoutId(retry.body.id, 1)], ['z', 400, 'customer_not_found']],
    'its items as they were decided, not quote_not_active');
  t.equal((await h.as(m, 'GET', '/payouts')).body.data.length, 2, 'two payouts, once each');
  t.match(await wallet(h, m, 'XOF'), { available: '3000', reserved: '2000' }, 'held once');
  const again = await bulk(m, items, key);
  t.same({ ...again.body, _meta: undefined }, { ...retry.body, _meta: undefined }, 'stored from then on');
});

t.test('after every batch above: the finance audit passes (ledger balanced, read models as the events fold)', async (t) => {
  const report = await runAudit(s.knex, s.store, projections);
  t.equal(report.ok, true, `the audit passes: ${report.discrepancies} discrepancies`);
  t.ok(report.read_models.some((r) => r.projection === 'payout_batches'), 'the batches\' read model audited too');
});
