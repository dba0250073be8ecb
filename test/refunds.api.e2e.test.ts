// Refunds over HTTP (CONTRACT §9, issue 33 point 1): full and partial refunds of a completed payin,
// the wallet's hold → post or release with balanced postings, the payin's refunded_amount and
// refund_ids, the sandbox's outcome by the refund's amount, the errors (each changing nothing), and
// idempotency. The races are in refunds.races.e2e.test.ts.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, request, type MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until, wallet } from './helpers/money.ts';
import { providers } from '../infra/providers/index.ts';
import { CHECK_JOB } from '../commands/leg-initiation.ts';
import { recording, responseChecker, type Recorded } from './helpers/openapi-responses.ts';

const app = await startTestApp();
t.teardown(() => app.stop());
const s = app.app.services;
// Every answer is recorded, and checked against the OpenAPI document at the end.
const seen: Recorded[] = [];
const h = recording(app, seen);

/** A CM payin of `amount` XAF from `phone`, waited for until terminal (a phone ending 99 fails, 98 stays pending). */
async function payin(m: MerchantCreds, phone = '+237670000001', amount = '5000', wait = true): Promise<any> {
  const customer = await newCustomer(h, m, 'CM', phone);
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', amount));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  return wait ? settled(h, m, 'payins', p.body.id) : p.body;
}

const refund = (m: MerchantCreds, body: Record<string, unknown>, idem: string | boolean = true) => h.as(m, 'POST', '/refunds', body, { idem });
const refundSettled = (m: MerchantCreds, id: string, status?: string) => until(`refund ${id} ${status ?? 'terminal'}`, async () => {
  const r = await h.as(m, 'GET', `/refunds/${id}`);
  const st = r.body?.status;
  return (status ? st === status : st === 'completed' || st === 'failed') ? r.body : undefined;
});
const getPayin = async (m: MerchantCreds, id: string) => (await h.as(m, 'GET', `/payins/${id}`)).body;
const payinVersion = async (id: string) => (await s.store.readStream(`payin-${id}`, 1)).length;

t.test('partial then full refund: held at create, posted to the operator on completion, shown on the payin', async (t) => {
  const m = await h.newMerchant();
  await topUp(h, m, 'XAF', '10000');
  const p = await payin(m);
  t.equal(p.status, 'completed');
  t.match(p, { refunded_amount: '0', refund_ids: [] }, 'a payin with no refund');
  const before = await wallet(h, m, 'XAF');
  t.same(before, { ...before, available: '14925', reserved: '0' });

  const r1 = await refund(m, { payin_id: p.id, amount: '2000.00', reason: 'Damaged item', metadata: { ticket: 'T-1' } });
  t.equal(r1.status, 201, r1.text);
  t.same(Object.keys(r1.body).filter((k) => k !== '_meta').sort(), [
    'amount', 'created_at', 'currency', 'history', 'id', 'merchant_id', 'metadata', 'payin_id', 'provider_reference', 'reason', 'recipient', 'status', 'updated_at',
    'failure_reason', 'provider_failure',
  ].sort(), 'exactly the fields of CONTRACT §9, and the failure of §15');
  t.match(r1.body, {
    merchant_id: m.merchantId, payin_id: p.id, status: 'pending', amount: '2000', currency: 'XAF', recipient: p.source,
    reason: 'Damaged item', metadata: { ticket: 'T-1' }, history: [{ status: 'created' }, { status: 'pending' }],
  });
  t.match(await wallet(h, m, 'XAF'), { available: '12925', reserved: '2000' }, 'held at create');
  const done = await refundSettled(m, r1.body.id);
  t.match(done, { status: 'completed', provider_reference: /^SBX-/ });
  t.match(await wallet(h, m, 'XAF'), { available: '12925', reserved: '0' }, 'reserved debited');
  const posted = await s.knex('ledger_entries').where({ reference_id: r1.body.id, movement: 'post' }).orderBy('posting_index');
  t.same(posted.map((e: any) => [e.reference_type, e.account, e.side, String(e.amount)]), [
    ['refund', `merchant:${m.merchantId}:reserved`, 'debit', '2000'], ['refund', 'provider:CM_MTN_MOMO', 'credit', '2000'],
  ], 'balanced postings to the operator, no fee');
  t.match(await getPayin(m, p.id), { status: 'completed', refunded_amount: '2000', refund_ids: [r1.body.id] });

  const r2 = await refund(m, { payin_id: p.id });
  t.equal(r2.status, 201);
  t.equal(r2.body.amount, '3000', 'the amount defaults to what is left');
  t.equal(r2.body.reason, null);
  t.same(r2.body.metadata, {});
  await refundSettled(m, r2.body.id, 'completed');
  t.match(await getPayin(m, p.id), { refunded_amount: '5000', refund_ids: [r1.body.id, r2.body.id] });
  t.match(await wallet(h, m, 'XAF'), { available: '9925', reserved: '0' });

  const version = await payinVersion(p.id);
  const over = await refund(m, { payin_id: p.id, amount: '100' });
  t.equal(over.status, 400);
  t.equal(over.body.error.code, 'refund_exceeds_payin');
  const none = await refund(m, { payin_id: p.id });
  t.equal(none.body.error.code, 'refund_exceeds_payin', 'nothing left: the default amount is refused too');
  t.match(await wallet(h, m, 'XAF'), { available: '9925', reserved: '0' }, 'nothing moved');
  t.equal(await payinVersion(p.id), version, 'nothing appended to the payin');

  const list = await h.as(m, 'GET', `/refunds?payin_id=${p.id}`);
  t.equal(list.status, 200);
  t.same(list.body.data.map((x: any) => x.id), [r2.body.id, r1.body.id], 'newest first, filtered by payin');
  const completed = await h.as(m, 'GET', '/refunds?status=completed&limit=1');
  t.equal(completed.body.data.length, 1);
  t.equal(completed.body.has_more, true);
  const history = await h.as(m, 'GET', `/refunds/${r1.body.id}/events`);
  t.equal(history.status, 200);
  t.same(history.body.data.map((e: any) => e.type), ['refund.created', 'refund.pending', 'refund.submitted', 'refund.completed']);
  const payinHistory = await h.as(m, 'GET', `/payins/${p.id}/events`);
  t.match(payinHistory.body.data.map((e: any) => e.type).slice(-4), ['payin.refund_claimed', 'payin.refund_settled', 'payin.refund_claimed', 'payin.refund_settled']);

  const other = await h.newMerchant('Other');
  t.equal((await h.as(other, 'GET', `/refunds/${r1.body.id}`)).status, 404, "another merchant's refund is not found");
  t.equal((await h.as(other, 'GET', `/refunds/${r1.body.id}/events`)).status, 404);
  t.same((await h.as(other, 'GET', '/refunds')).body.data, []);
});

t.test('the sandbox settles a refund by its amount: 99 fails (released, given back to the payin), 98 stays pending', async (t) => {
  const m = await h.newMerchant();
  await topUp(h, m, 'XAF', '10000');
  const p = await payin(m);
  const failing = await refund(m, { payin_id: p.id, amount: '1099' });
  t.equal(failing.status, 201);
  const failed = await refundSettled(m, failing.body.id);
  t.match(failed, {
    status: 'failed', failure_reason: 'provider_error', provider_failure: { provider: 'sandbox', code: 'REFUND_REJECTED' },
    history: [{ status: 'created' }, { status: 'pending' }, { status: 'failed', reason: 'provider_error' }],
  });
  t.match(await wallet(h, m, 'XAF'), { available: '14925', reserved: '0' }, 'the hold released');
  const released = await s.knex('ledger_entries').where({ reference_id: failing.body.id, movement: 'release' });
  t.equal(released.length, 2);
  t.match(await getPayin(m, p.id), { refunded_amount: '0', refund_ids: [failing.body.id] });

  const stuck = await refund(m, { payin_id: p.id, amount: '1098' });
  t.equal(stuck.status, 201);
  await until('submitted', async () => (await h.as(m, 'GET', `/refunds/${stuck.body.id}`)).body.provider_reference);
  // Its status asked of the provider after the leg's settle time (the check's second run), and still pending.
  await until('the stuck refund checked after its settle time', async () =>
    Number((await s.knex('jobs').where({ kind: CHECK_JOB, key: stuck.body.id }).first('attempts'))?.attempts ?? 0) >= 2);
  t.equal((await h.as(m, 'GET', `/refunds/${stuck.body.id}`)).body.status, 'pending', 'an amount ending 98 stays pending');
  const rest = await refund(m, { payin_id: p.id });
  t.equal(rest.body.amount, '3902', 'the failed refund gave its amount back; the pending one still counts');
  await refundSettled(m, rest.body.id, 'completed');
  t.equal((await refund(m, { payin_id: p.id, amount: '1' })).body.error.code, 'refund_exceeds_payin');

  const cb = await providers(s).sandbox.callbackFor(stuck.body.id, { state: 'completed' });
  t.equal((await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers })).status, 200);
  await refundSettled(m, stuck.body.id, 'completed');
  t.equal((await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers })).status, 200, 'replayed');
  t.match(await getPayin(m, p.id), { refunded_amount: '5000', refund_ids: [failing.body.id, stuck.body.id, rest.body.id] });
  t.match(await wallet(h, m, 'XAF'), { available: '9925', reserved: '0' }, 'each refund debited once');
});

t.test('idempotency: the same key answers the same refund, a new body under it is a conflict', async (t) => {
  const m = await h.newMerchant();
  await topUp(h, m, 'XAF', '10000');
  const p = await payin(m);
  const key = randomUUID();
  const first = await refund(m, { payin_id: p.id, amount: '1000' }, key);
  t.equal(first.status, 201);
  t.equal(first.body._meta.idempotency_replayed, false);
  const again = await refund(m, { payin_id: p.id, amount: '1000' }, key);
  t.equal(again.status, 201);
  t.equal(again.body.id, first.body.id);
  t.equal(again.body._meta.idempotency_replayed, true);
  t.equal((await refund(m, { payin_id: p.id, amount: '2000' }, key)).status, 409);
  t.equal((await h.as(m, 'POST', '/refunds', { payin_id: p.id })).body.error.code, 'idempotency_key_required');
  await refundSettled(m, first.body.id);
  t.match(await wallet(h, m, 'XAF'), { available: '13925', reserved: '0' }, 'refunded once');
  t.match(await getPayin(m, p.id), { refund_ids: [first.body.id] });
});

t.test('refusals change nothing: not completed, another merchant, unknown, bad shapes, short wallet', async (t) => {
  const m = await h.newMerchant();
  const p = await payin(m); // no top-up: available is the payin's 4925 net
  const pending = await payin(m, '+237670000098', '5000', false);
  const failed = await payin(m, '+237670000099');
  t.equal(failed.status, 'failed');
  const other = await h.newMerchant('Other');
  const before = await wallet(h, m, 'XAF');
  const versions = [await payinVersion(p.id), await payinVersion(pending.id), await payinVersion(failed.id)];
  const cases: Array<[string, Record<string, unknown>, string, MerchantCreds?]> = [
    ['a pending payin', { payin_id: pending.id }, 'refund_not_allowed'],
    ['a failed payin', { payin_id: failed.id, amount: '100' }, 'refund_not_allowed'],
    ["another merchant's payin", { payin_id: p.id, amount: '100' }, 'payin_not_found', other],
    ['an unknown payin', { payin_id: randomUUID() }, 'payin_not_found'],
    ['a payin id that is no uuid', { payin_id: 'nope' }, 'bad_request'],
    ['no payin id', { amount: '100' }, 'bad_request'],
    ['an amount as a number', { payin_id: p.id, amount: 100 }, 'bad_request'],
    ['a fractional amount', { payin_id: p.id, amount: '100.50' }, 'bad_request'],
    ['a negative amount', { payin_id: p.id, amount: '-100' }, 'bad_request'],
    ['a zero amount', { payin_id: p.id, amount: '0' }, 'bad_request'],
    ['an amount over the payin', { payin_id: p.id, amount: '5001' }, 'refund_exceeds_payin'],
    ['an unknown field', { payin_id: p.id, amount: '100', fee: '0' }, 'bad_request'],
    ['metadata of the wrong shape', { payin_id: p.id, metadata: { a: 1 } }, 'bad_request'],
    ['more than the wallet holds', { payin_id: p.id }, 'insufficient_balance'],
  ];
  for (const [what, body, code, who] of cases) {
    const r = await refund(who ?? m, body);
    t.equal(r.status, 400, `${what}: 400`);
    t.equal(r.body.error?.code, code, `${what}: ${code}`);
    if (code === 'bad_request') t.ok(r.body.error.details?.length > 0, `${what}: details name the field`);
  }
  t.same(await wallet(h, m, 'XAF'), before, 'the wallet unchanged');
  t.same([await payinVersion(p.id), await payinVersion(pending.id), await payinVersion(failed.id)], versions, 'no payin changed');
  t.match(await getPayin(m, p.id), { refunded_amount: '0', refund_ids: [] });
  t.same((await h.as(m, 'GET', '/refunds')).body.data, [], 'no refund created');
  const ok = await refund(m, { payin_id: p.id, amount: '4925' });
  t.equal(ok.status, 201, 'what the wallet holds can be refunded');
});

t.test('every answer above matches the OpenAPI document (Refund, Payin with its refund fields, errors)', async (t) => {
  const check = responseChecker((await request(h.url, 'GET', '/openapi.json')).body);
  const covered = new Set<string>();
  for (const rec of seen) {
    const { operationId, problems } = check(rec);
    t.same(problems, [], `${rec.method} ${rec.path} → ${rec.status}`);
    if (operationId) covered.add(operationId);
  }
  for (const op of ['createRefund', 'getRefund', 'listRefunds', 'getRefundEvents', 'getPayin']) t.ok(covered.has(op), `${op} checked`);
});
