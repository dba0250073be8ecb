// Payins over HTTP, through the provider gateway and the sandbox provider: completion credits the
// wallet once, failures carry the provider's reason, stuck legs stay pending and keep being checked,
// OTPs are never stored in clear, a quote backs one payin under concurrency, and redelivered bus
// messages and replayed callbacks have no second effect.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, request, caughtUp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until, wallet } from './helpers/money.ts';
import { providers } from '../infra/providers/index.ts';
import { toMessage } from '../workers/event-forwarder.ts';
import { CHECK_JOB } from '../commands/leg-initiation.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

async function payin(m: Parameters<typeof h.as>[0], customer: string, quoteId: string, source: unknown, extra: Record<string, unknown> = {}, idem: string | boolean = true) {
  return h.as(m, 'POST', '/payins', { quote_id: quoteId, customer_id: customer, source, ...extra }, { idem });
}

async function cmSetup(amount = '5000') {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m);
  const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('CM_MTN_MOMO', 'CM', 'XAF', amount) });
  return { m, customer, q };
}

t.test('end to end: 201 pending, then completed by the sandbox, wallet credited with receive_amount', async (t) => {
  const { m, customer, q } = await cmSetup();
  const p = await payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '670 00 00 01'), { metadata: { order_id: 'A-1' } });
  t.equal(p.status, 201);
  t.match(p.body, {
    id: String, merchant_id: m.merchantId, customer_id: customer, quote_id: q.id, status: 'pending',
    send_amount: '5000', receive_amount: '4925', total_fee: '75', send_currency: 'XAF', country_code: 'CM', operator_code: 'CM_MTN_MOMO',
    rail_type: 'mobile_money', source: { phone: '+237670000001' }, metadata: { order_id: 'A-1' },
    history: [{ status: 'created', reason: null }, { status: 'pending' }],
  });
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'consumed', 'the quote is consumed');
  const done = await settled(h, m, 'payins', p.body.id);
  t.match(done, {
    status: 'completed', provider_reference: /^SBX-/, completed_at: String, failed_at: null, metadata: { order_id: 'A-1' },
    wallet_impact: { effects: [{ when: 'completed', available_delta: '4925', applied: true }] },
  });
  t.same(done.history.map((x: any) => x.status), ['created', 'pending', 'completed']);
  t.match(await wallet(h, m, 'XAF'), { available: '4925', reserved: '0' });
  const ledger = await s.knex('ledger_entries').where({ reference_id: p.body.id }).orderBy('posting_index');
  t.same(ledger.map((r: any) => [r.account, r.side, String(r.amount)]), [
    ['provider:CM_MTN_MOMO', 'debit', '5000'], [`merchant:${m.merchantId}:available`, 'credit', '4925'], ['platform:fees', 'credit', '75'],
  ], 'balanced postings in the ledger');
  const other = await h.newMerchant('Other');
  t.equal((await h.as(other, 'GET', `/payins/${p.body.id}`)).status, 404, "another merchant's payin is not found");
});

t.test('phone …99: failed with the provider reason; …999: payer not found; nothing credited', async (t) => {
  const { m, customer, q } = await cmSetup();
  const p = await payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '+237670000099'));
  const failed = await settled(h, m, 'payins', p.body.id);
  t.match(failed, {
    status: 'failed', failure_reason: 'insufficient_funds', provider_failure: { provider: 'sandbox', code: 'INSUFFICIENT_FUNDS' }, failed_at: String, completed_at: null,
  });
  t.match(failed.history[2], { status: 'failed', reason: 'insufficient_funds' });
  const q2 = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p2 = await payin(m, customer, q2.id, party('CM', 'CM_MTN_MOMO', '+237670000999'));
  t.match(await settled(h, m, 'payins', p2.body.id), { status: 'failed', failure_reason: 'account_not_found', provider_failure: { code: 'PAYER_NOT_FOUND' } });
  t.match(await wallet(h, m, 'XAF'), { available: '0', reserved: '0' });
});

t.test('phone …98: still pending after several settle periods, the check stays scheduled; a callback settles it once', async (t) => {
  const { m, customer, q } = await cmSetup();
  const p = await payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '+237670000098'));
  await until('the leg submitted', async () => (await h.as(m, 'GET', `/payins/${p.body.id}`)).body.provider_reference);
  const job = await until('checked three times', async () => {
    const row = await s.knex('jobs').where({ kind: CHECK_JOB, key: p.body.id }).first();
    return row && row.attempts >= 3 ? row : undefined;
  });
  t.ok(job, 'the status check is still scheduled after several settle periods');
  const still = await h.as(m, 'GET', `/payins/${p.body.id}`);
  t.equal(still.body.status, 'pending', 'and the payin still pending');
  t.ok(new Date(job.due_at).getTime() > Date.now() - 1000, 'its next check is ahead (backing off, never dropped)');

  const cb = await providers(s).sandbox.callbackFor(p.body.id, { state: 'completed' });
  const forged = await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: { 'x-sandbox-signature': 'f'.repeat(64) } });
  t.equal(forged.status, 401, 'a callback with a bad signature is refused');
  t.equal((await h.as(m, 'GET', `/payins/${p.body.id}`)).body.status, 'pending', 'and changes nothing');
  const first = await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers });
  t.equal(first.status, 200);
  t.equal((await h.as(m, 'GET', `/payins/${p.body.id}`)).body.status, 'completed', 'the callback completed it');
  const eventsBefore = await s.knex('events').count<{ count: string }[]>('* as count');
  const replay = await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers });
  t.equal(replay.status, 200, 'a replayed callback is acknowledged');
  const eventsAfter = await s.knex('events').count<{ count: string }[]>('* as count');
  t.equal(eventsAfter[0]!.count, eventsBefore[0]!.count, 'and appends nothing');
  t.match(await wallet(h, m, 'XAF'), { available: '4925', reserved: '0' }, 'credited once');
  await until('the check job ends', async () => !(await s.knex('jobs').where({ kind: CHECK_JOB, key: p.body.id }).first()));
  const unknown = await providers(s).sandbox.callbackFor('no-such-leg', { state: 'completed' });
  t.equal(unknown, undefined);
});

t.test('refusals: quote, customer, party, each code; a refused request never consumes the quote', async (t) => {
  const { m, customer, q } = await cmSetup();
  const src = party('CM', 'CM_MTN_MOMO', '+237670000001');
  const code = async (body: Record<string, unknown>) => {
    const r = await h.as(m, 'POST', '/payins', body, { idem: true });
    t.equal(r.status, 400);
    return r.body.error;
  };
  t.equal((await code({ quote_id: q.id, customer_id: customer, source: party('CM', 'CM_ORANGE_MOMO', '+237690000001') })).code, 'quote_mismatch', 'another operator');
  t.equal((await code({ quote_id: q.id, customer_id: customer, source: party('SN', 'SN_WAVE_MOMO', '+221770000001') })).code, 'quote_mismatch', 'another country');
  t.equal((await code({ quote_id: q.id, customer_id: customer, source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO' } })).code, 'bad_request', 'no phone');
  const badPhone = await code({ quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+221770000001') });
  t.equal(badPhone.code, 'bad_request', 'a phone of another country');
  t.same(badPhone.details.map((d: any) => d.field), ['source.phone']);
  const both = await code({ quote_id: q.id, customer_id: customer, colour: 'red', source: party('CM', 'CM_MTN_MOMO', '+221770000001') });
  t.same(both.details.map((d: any) => d.field).sort(), ['colour', 'source.phone'], 'a schema error and a bad phone in one answer (issue 31)');
  const otherCustomer = await newCustomer(h, m, 'CM', '+237670000002');
  t.equal((await code({ quote_id: q.id, customer_id: otherCustomer, source: src })).code, 'quote_mismatch', 'the quote was made for another customer');
  t.equal((await code({ quote_id: q.id, customer_id: randomUUID(), source: src })).code, 'customer_not_found');
  const payoutQuote = await quote(h, m, 'payout', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  t.equal((await code({ quote_id: payoutQuote.id, customer_id: customer, source: src })).code, 'quote_mismatch', 'a payout quote');
  const other = await h.newMerchant('Other');
  const theirQuote = await quote(h, other, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const foreign = await code({ quote_id: theirQuote.id, customer_id: customer, source: src });
  const none = await code({ quote_id: randomUUID(), customer_id: customer, source: src });
  t.equal(foreign.code, 'quote_not_found');
  t.same({ ...foreign, request_id: undefined }, { ...none, request_id: undefined }, "another merchant's quote: the identical answer");
  t.equal((await code({ quote_id: q.id, customer_id: customer, source: { ...src, phone: 670000001 } })).code, 'bad_request', 'JSON numbers are refused');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'none of these consumed the quote');
  const ok = await payin(m, customer, q.id, src);
  t.equal(ok.status, 201, 'the quote still works');
  t.equal((await code({ quote_id: q.id, customer_id: customer, source: src })).code, 'quote_not_active', 'a used quote');
});

t.test('10 concurrent payins on one quote with different keys: exactly one 201', async (t) => {
  const { m, customer, q } = await cmSetup();
  const answers = await Promise.all(Array.from({ length: 10 }, () => payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '+237670000098'))));
  const created = answers.filter((a) => a.status === 201);
  t.equal(created.length, 1, 'one payin');
  t.same(answers.filter((a) => a.status !== 201).map((a) => a.body.error.code), Array(9).fill('quote_not_active'));
  t.comment(`races: 10 concurrent payins on one quote: ${created.length} created, ${answers.length - created.length} quote_not_active`);
  const list = await h.as(m, 'GET', '/payins');
  t.equal(list.body.data.length, 1);
  t.match((await h.as(m, 'GET', `/quotes/${q.id}`)).body, { status: 'consumed', consumed_by: { type: 'payin', id: created[0]!.body.id } });
});

t.test('OTP: required for Orange SN/CI, 000000 fails the collection, never stored in clear nor returned', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  const src = party('SN', 'SN_ORANGE_MOMO', '+221770000001');
  const q = await quote(h, m, 'payin', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '5000'));
  const missing = await payin(m, customer, q.id, src);
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'otp_required');
  t.equal((await h.as(m, 'GET', `/quotes/${q.id}`)).body.status, 'active', 'the quote is not consumed');
  t.equal((await payin(m, customer, q.id, src, { otp: '12' })).status, 400, 'an OTP is 4 to 8 digits');

  const OTP = '73918264';
  const p = await payin(m, customer, q.id, src, { otp: OTP });
  t.equal(p.status, 201);
  t.notOk(p.text.includes(OTP), 'not in the response');
  t.notOk('otp' in p.body);
  const done = await settled(h, m, 'payins', p.body.id);
  t.equal(done.status, 'completed', 'a good OTP collects');
  t.notOk(JSON.stringify(done).includes(OTP), 'not in GET');
  const events = await s.knex.raw(`SELECT count(*)::int AS n FROM events WHERE data::text LIKE ? OR metadata::text LIKE ?`, [`%${OTP}%`, `%${OTP}%`]);
  t.equal(events.rows[0].n, 0, 'not in the event store');
  t.equal((await s.knex('otp_vault').where({ reference: p.body.id })).length, 0, 'the sealed OTP is gone once handed to the provider');
  const tables = await s.knex.raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
  const hits: string[] = [];
  for (const { table_name } of tables.rows as Array<{ table_name: string }>) {
    const r = await s.knex.raw(`SELECT count(*)::int AS n FROM "${table_name}" x WHERE x::text LIKE ?`, [`%${OTP}%`]);
    if (r.rows[0].n > 0) hits.push(table_name);
  }
  t.same(hits, [], 'the OTP is in no table of the database');

  const q2 = await quote(h, m, 'payin', leg('CI_ORANGE_MOMO', 'CI', 'XOF', '5000'));
  const bad = await payin(m, customer, q2.id, party('CI', 'CI_ORANGE_MOMO', '+2250701020304'), { otp: '000000' });
  t.equal(bad.status, 201);
  t.match(await settled(h, m, 'payins', bad.body.id), { status: 'failed', failure_reason: 'payer_declined', provider_failure: { code: 'INVALID_OTP' } });
  t.match(await wallet(h, m, 'XOF'), { available: '4925', reserved: '0' }, 'only the good collection credited');
});

t.test('redelivered payin.created: initiated once, credited once', async (t) => {
  const { m, customer, q } = await cmSetup();
  const p = await payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '+237670000098'));
  const recorded = await s.store.readStream(`payin-${p.body.id}`);
  const msg = toMessage(recorded.find((e) => e.type === 'payin.created')!);
  await s.bus.publish('events.payin.created', randomUUID(), msg);
  await s.bus.publish('events.payin.created', randomUUID(), msg);
  await until('submitted', async () => (await h.as(m, 'GET', `/payins/${p.body.id}`)).body.provider_reference);
  await caughtUp(h); // both redelivered messages handled
  const legs = await s.knex('sandbox_provider_legs').where({ reference: p.body.id });
  t.equal(legs.length, 1, 'initiated once at the provider');
  const cb = await providers(s).sandbox.callbackFor(p.body.id, { state: 'completed' });
  t.equal((await request(h.url, 'POST', '/provider-callbacks/sandbox', { body: cb!.body, headers: cb!.headers })).status, 200);
  await settled(h, m, 'payins', p.body.id, 'completed');
  await s.bus.publish('events.payin.created', randomUUID(), msg);
  await s.bus.publish('events.payin.created', randomUUID(), msg);
  await caughtUp(h); // the late redeliveries handled
  const types = (await s.store.readStream(`payin-${p.body.id}`)).map((e) => e.type);
  t.same(types, ['payin.created', 'payin.pending', 'payin.submitted', 'payin.completed'], 'one submission, one completion');
  t.equal((await s.knex('sandbox_provider_legs').where({ reference: p.body.id })).length, 1);
  const credits = await s.knex('ledger_entries').where({ reference_id: p.body.id, movement: 'credit' });
  t.equal(new Set(credits.map((c: any) => c.event_id)).size, 1, 'one credit');
  t.match(await wallet(h, m, 'XAF'), { available: '4925' });
});

t.test('lists: filters by status and customer, idempotent create replays', async (t) => {
  const { m, customer, q } = await cmSetup();
  const other = await newCustomer(h, m, 'CM', '+237670000003');
  const q2 = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '7000'));
  const a = await payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '+237670000001'), {}, 'k-a');
  const replay = await payin(m, customer, q.id, party('CM', 'CM_MTN_MOMO', '+237670000001'), {}, 'k-a');
  t.equal(replay.status, 201);
  t.equal(replay.body.id, a.body.id);
  t.equal(replay.body._meta.idempotency_replayed, true);
  const b = await payin(m, other, q2.id, party('CM', 'CM_MTN_MOMO', '+237670000099'));
  await settled(h, m, 'payins', a.body.id);
  await settled(h, m, 'payins', b.body.id);
  t.same((await h.as(m, 'GET', '/payins?status=completed')).body.data.map((x: any) => x.id), [a.body.id]);
  t.same((await h.as(m, 'GET', '/payins?status=failed')).body.data.map((x: any) => x.id), [b.body.id]);
  t.same((await h.as(m, 'GET', `/payins?customer_id=${other}`)).body.data.map((x: any) => x.id), [b.body.id]);
  const all = await h.as(m, 'GET', '/payins?limit=1');
  t.equal(all.body.has_more, true);
  t.equal(all.body.data[0].id, b.body.id, 'newest first');
  const future = await h.as(m, 'GET', `/payins?created_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
  t.same(future.body.data, []);
});
