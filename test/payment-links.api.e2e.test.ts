// Payment links over HTTP (CONTRACT §16: create, list, read, deactivate, a link's payments) and the
// payer's payment through one (payThroughLink, as the payer's page calls it): one payin per attempt,
// places held by pending payins, payments_count and the completed and expired statuses, the payer's
// customer, and refusals that name the page's fields and create nothing.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, caughtUp } from './helpers/app.ts';
import { newCustomer, settled, sleep, until } from './helpers/money.ts';
import { eventsOf } from './helpers/webhooks.ts';
import { payThroughLink } from '../commands/payment-links.ts';
import { DomainError } from '../domain/errors.ts';

const h = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://pay.example.com/' } });
t.teardown(() => h.stop());
const s = h.app.services;
const meta = { requestId: 'test', actor: 'pay-page' };

type M = Awaited<ReturnType<typeof h.newMerchant>>;
const createLink = (m: M, body: Record<string, unknown> = {}, idem: string | boolean = true) =>
  h.as(m, 'POST', '/payment-links', { amount: '5000', currency: 'XAF', description: 'Robe wax, taille M', ...body }, { idem });

/** The payer's attempt as the page sends it (a CM MTN payer by default). */
const pay = (linkId: string, o: Partial<Parameters<typeof payThroughLink>[1]> = {}) => payThroughLink(s, {
  linkId, attemptId: randomUUID(), countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '670000001', name: 'Awa Diop', otp: undefined, ...o,
}, meta);

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const linkOf = async (m: M, id: string) => (await h.as(m, 'GET', `/payment-links/${id}`)).body;

t.test('create, read, list (newest first, by status), deactivate', async (t) => {
  const m = await h.newMerchant();
  const c = await createLink(m, { metadata: { order: 'A-42' }, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  t.equal(c.status, 201);
  const id = c.body.id;
  t.match(c.body, {
    id: String, url: `https://pay.example.com/pay/${id}`, qr_svg_url: `https://pay.example.com/pay/${id}/qr.svg`, status: 'active',
    amount: '5000', currency: 'XAF', description: 'Robe wax, taille M', payments_count: 0, expires_at: String, max_payments: 1,
    customer_id: null, metadata: { order: 'A-42' }, created_at: String,
  });
  const { _meta: _, ...read } = c.body;
  t.same(await linkOf(m, id), read, 'GET answers the link as created');
  const unlimited = await createLink(m, { amount: '2500.00', max_payments: null });
  t.match(unlimited.body, { amount: '2500', max_payments: null });
  const list = await h.as(m, 'GET', '/payment-links');
  t.same(list.body.data.map((l: any) => l.id), [unlimited.body.id, id], 'newest first');
  t.match(list.body, { has_more: false, next_cursor: null });
  const d = await h.as(m, 'POST', `/payment-links/${id}/deactivate`);
  t.equal(d.status, 200);
  t.match(d.body, { id, status: 'inactive' });
  t.match((await h.as(m, 'POST', `/payment-links/${id}/deactivate`)).body, { id, status: 'inactive' }, 'again: the same answer');
  t.same((await h.as(m, 'GET', '/payment-links?status=inactive')).body.data.map((l: any) => l.id), [id]);
  t.same((await h.as(m, 'GET', '/payment-links?status=active')).body.data.map((l: any) => l.id), [unlimited.body.id]);
  t.match(await refusal(pay(id)), { code: 'payment_link_closed', details: [{ field: 'status', message: 'inactive' }] }, 'an inactive link takes no payment');
});

t.test('idempotent create: same key, same answer; another body → 409; bad fields → 400 naming them', async (t) => {
  const m = await h.newMerchant();
  const first = await createLink(m, {}, 'link-key-1');
  const again = await createLink(m, {}, 'link-key-1');
  t.equal(again.status, 201);
  t.equal(again.body.id, first.body.id);
  t.equal(again.body._meta.idempotency_replayed, true);
  const other = await createLink(m, { amount: '6000' }, 'link-key-1');
  t.equal(other.status, 409);
  t.equal(other.body.error.code, 'idempotency_conflict');
  t.equal((await h.as(m, 'POST', '/payment-links', { amount: '5000', currency: 'XAF', description: 'x' })).body.error.code, 'idempotency_key_required');
  const past = await createLink(m, { expires_at: new Date(Date.now() - 60_000).toISOString() });
  t.equal(past.status, 400);
  t.same(past.body.error.details.map((d: any) => d.field), ['expires_at'], 'expires_at in the past');
  const small = await createLink(m, { amount: '50' });
  t.match(small.body.error, { code: 'amount_out_of_range', details: [{ field: 'amount' }] });
  t.equal((await createLink(m, { max_payments: 0 })).status, 400);
  t.equal((await createLink(m, { amount: 5000 })).status, 400, 'a JSON number is refused');
  const stranger = await createLink(m, { customer_id: randomUUID() });
  t.equal(stranger.body.error.code, 'customer_not_found');
  t.equal((await h.as(m, 'GET', '/payment-links')).body.data.length, 1, 'only the first link was made');
});

t.test("tenant isolation: another merchant's link is 404 everywhere", async (t) => {
  const m = await h.newMerchant();
  const other = await h.newMerchant('Other');
  const id = (await createLink(m)).body.id;
  t.equal((await h.as(other, 'GET', `/payment-links/${id}`)).status, 404);
  t.equal((await h.as(other, 'POST', `/payment-links/${id}/deactivate`)).status, 404);
  t.equal((await h.as(other, 'GET', `/payment-links/${id}/payments`)).status, 404);
  t.same((await h.as(other, 'GET', '/payment-links')).body.data, []);
  const theirCustomer = await newCustomer(h, other);
  t.equal((await createLink(m, { customer_id: theirCustomer })).body.error.code, 'customer_not_found', "another merchant's customer");
  t.equal((await linkOf(m, id)).status, 'active', 'still active');
  t.equal((await h.as(m, 'GET', `/payment-links/${randomUUID()}`)).status, 404);
});

t.test('one payin per attempt, carrying payment_link_id; a new customer from the page; completed', async (t) => {
  const m = await h.newMerchant();
  const id = (await createLink(m, { metadata: { order: 'A-7' } })).body.id;
  const attemptId = randomUUID();
  const [a, b] = await Promise.all([pay(id, { attemptId }), pay(id, { attemptId })]);
  t.equal(a.payinId, b.payinId, 'a double submit: one payin');
  t.same([a.existed, b.existed].sort(), [false, true]);
  t.equal(a.merchantId, m.merchantId);
  const again = await pay(id, { attemptId });
  t.match(again, { payinId: a.payinId, existed: true }, 'a retry answers the existing payin');
  const done = await settled(h, m, 'payins', a.payinId);
  t.match(done, { status: 'completed', payment_link_id: id, send_amount: '5000', receive_amount: '4925', metadata: { order: 'A-7' } },
    'the payer pays exactly the link\'s amount; the fee comes out of it');
  const customer = (await h.as(m, 'GET', `/customers/${done.customer_id}`)).body;
  t.match(customer, { customer_type: 'individual', first_name: 'Awa', last_name: 'Diop', phone: '+237670000001', country_code: 'CM' });
  const link = await until('payments_count 1', async () => { const l = await linkOf(m, id); return l.payments_count === 1 ? l : undefined; });
  t.equal(link.status, 'completed', 'max_payments 1 reached');
  t.match(await refusal(pay(id)), { code: 'payment_link_closed', details: [{ message: 'completed' }] });
  t.same((await h.as(m, 'GET', `/payment-links/${id}/payments`)).body.data.map((p: any) => p.id), [a.payinId]);
  t.same((await h.as(m, 'GET', `/payins?payment_link_id=${id}`)).body.data.map((p: any) => p.id), [a.payinId]);
  t.equal((await h.as(m, 'GET', '/payment-links?status=completed')).body.data[0].id, id);
  const event = await until('the payin.completed event', async () => (await eventsOf(h, m, a.payinId)).find((e) => e.event === 'payin.completed'));
  t.equal(event.data.object.payment_link_id, id, 'the webhook carries payment_link_id');
  t.equal((await s.knex('payins').where({ payment_link_id: id }).count('* as n').first())!.n, '1', 'one payin in all');
});

t.test('places: a pending payin holds the only place; a failed one frees it', async (t) => {
  const m = await h.newMerchant();
  const id = (await createLink(m)).body.id;
  const stuck = await pay(id, { phone: '+237670000098' }); // stays pending (CONTRACT §3)
  const busy = await refusal(pay(id));
  t.equal(busy.code, 'payment_link_busy', 'the only place is held');
  const failing = (await createLink(m)).body.id;
  const failed = await pay(failing, { phone: '+237670000099' }); // fails (CONTRACT §3)
  await settled(h, m, 'payins', failed.payinId, 'failed');
  const next = await until('the failed payin\'s place freed', async () => {
    try {
      return await pay(failing);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'payment_link_busy') return undefined;
      throw err;
    }
  });
  await settled(h, m, 'payins', next.payinId, 'completed');
  const link = await until('payments_count 1', async () => { const l = await linkOf(m, failing); return l.payments_count === 1 ? l : undefined; });
  t.equal(link.status, 'completed');
  t.same((await h.as(m, 'GET', `/payment-links/${failing}/payments`)).body.data.map((p: any) => p.status), ['completed', 'failed']);
  t.match(await linkOf(m, id), { status: 'active', payments_count: 0 }, 'a pending payin counts for nothing yet');
  t.equal((await h.as(m, 'GET', `/payins/${stuck.payinId}`)).body.status, 'pending');
});

t.test("the link's customer pays; no name asked", async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m);
  const id = (await createLink(m, { customer_id: customer, max_payments: 2 })).body.id;
  t.equal((await linkOf(m, id)).customer_id, customer);
  const p = await pay(id, { name: undefined });
  t.equal((await h.as(m, 'GET', `/payins/${p.payinId}`)).body.customer_id, customer);
  t.equal((await h.as(m, 'GET', '/customers')).body.data.length, 1, 'no other customer made');
});

t.test('expired: computed when read; no payment', async (t) => {
  const m = await h.newMerchant();
  const id = (await createLink(m, { expires_at: new Date(Date.now() + 1_500).toISOString() })).body.id;
  t.equal((await linkOf(m, id)).status, 'active');
  await sleep(1_600);
  t.equal((await linkOf(m, id)).status, 'expired');
  t.same((await h.as(m, 'GET', '/payment-links?status=expired')).body.data.map((l: any) => l.id), [id]);
  t.same((await h.as(m, 'GET', '/payment-links?status=active')).body.data, []);
  t.match(await refusal(pay(id)), { code: 'payment_link_closed', details: [{ message: 'expired' }] });
});

t.test('refusals name the form fields and create nothing', async (t) => {
  const m = await h.newMerchant();
  const id = (await createLink(m)).body.id;
  const fields = async (o: Partial<Parameters<typeof payThroughLink>[1]>) => (await refusal(pay(id, o))).details?.map((d) => d.field);
  t.same(await fields({ phone: '12' }), ['phone'], 'a bad phone');
  t.same(await fields({ operatorCode: 'CM_NOPE' }), ['operator_code']);
  t.same(await fields({ countryCode: 'SN', operatorCode: 'SN_WAVE_MOMO', phone: '+221770000001' }), ['country_code'], 'a XOF country for a XAF link');
  t.same(await fields({ operatorCode: 'BJ_MTN_MOMO' }), ['operator_code'], 'an operator of another country');
  t.same(await fields({ name: '  ' }), ['name'], 'no name and no customer on the link');
  const xof = (await createLink(m, { currency: 'XOF', max_payments: null })).body.id;
  const otp = await refusal(pay(xof, { countryCode: 'SN', operatorCode: 'SN_ORANGE_MOMO', phone: '+221770000001' }));
  t.match(otp, { code: 'otp_required', details: [{ field: 'otp' }] });
  t.equal((await h.admin('PUT', '/admin/operators/CM_ORANGE_MOMO/availability', { payin: 'closed' })).status, 200);
  t.teardown(() => h.admin('PUT', '/admin/operators/CM_ORANGE_MOMO/availability', { payin: 'operational' }));
  const closed = await refusal(pay(id, { operatorCode: 'CM_ORANGE_MOMO', phone: '+237690000001' }));
  t.match(closed, { code: 'operator_unavailable', details: [{ field: 'operator_code' }] }, 'an operator closed for payins');
  t.equal((await refusal(pay(randomUUID()))).code, 'not_found');
  await caughtUp(h);
  t.same((await h.as(m, 'GET', '/payins')).body.data, [], 'no payin');
  t.same((await h.as(m, 'GET', '/quotes')).body.data, [], 'no quote');
  t.same((await h.as(m, 'GET', '/customers')).body.data, [], 'no customer');
});

t.test("a link's event history: its merchant's only", async (t) => {
  const m = await h.newMerchant();
  const id = (await createLink(m)).body.id;
  await h.as(m, 'POST', `/payment-links/${id}/deactivate`);
  const history = await h.as(m, 'GET', `/payment-links/${id}/events`);
  t.equal(history.status, 200);
  t.same(history.body.data.map((e: any) => e.type), ['payment_link.created', 'payment_link.deactivated']);
  t.equal((await h.as(await h.newMerchant('Other'), 'GET', `/payment-links/${id}/events`)).status, 404);
});
