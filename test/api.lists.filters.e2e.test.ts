// List filters (CONTRACT.md §8: status, customer_id, created_from, created_to on every list):
// GET /customers by the customer's own id, and every filter of GET /payouts, alone, combined and
// across pages.
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, quote, settled, topUp } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

const ids = async (t: Test, m: MerchantCreds, p: string): Promise<string[]> => {
  const r = await h.as(m, 'GET', p);
  t.equal(r.status, 200, p);
  return r.body.data.map((x: { id: string }) => x.id);
};
const enc = encodeURIComponent;

t.test('GET /customers?customer_id: that customer only; unknown or another merchant\'s → empty', async (t) => {
  const m = await h.newMerchant('Customers');
  const other = await h.newMerchant('Other');
  const [a, b, c] = [await newCustomer(h, m), await newCustomer(h, m), await newCustomer(h, m)];
  const foreign = await newCustomer(h, other);
  t.same(await ids(t, m, '/customers'), [c, b, a]);
  t.same(await ids(t, m, `/customers?customer_id=${b}`), [b]);
  t.same(await ids(t, m, `/customers?customer_id=${randomUUID()}`), [], 'an unknown id: empty');
  t.same(await ids(t, m, `/customers?customer_id=${foreign}`), [], 'another merchant\'s customer: empty, like an unknown one');
  t.same(await ids(t, m, `/customers?customer_id=${b}&status=not_started`), [b], 'with the KYC status');
  t.same(await ids(t, m, `/customers?customer_id=${b}&status=verified`), []);
  const created = (await h.as(m, 'GET', `/customers/${b}`)).body.created_at;
  t.same(await ids(t, m, `/customers?customer_id=${b}&created_from=${enc(created)}&created_to=${enc(created)}`), [b], 'with the date range');
  const r = await h.as(m, 'GET', '/customers?customer_id=nope');
  t.equal(r.status, 400);
  t.same(r.body.error.details.map((d: { field: string }) => d.field), ['query.customer_id']);
  const doc = (await h.as(m, 'GET', '/openapi.json')).body;
  const params = doc.paths['/customers'].get.parameters.map((p: { name: string }) => p.name);
  for (const p of ['status', 'customer_id', 'created_from', 'created_to']) t.ok(params.includes(p), `documents ${p}`);
  t.match(doc.paths['/customers'].get.description, /customer_id/);
});

t.test('GET /payouts filters: status, customer_id, created_from, created_to, combined and paged', async (t) => {
  const m = await h.newMerchant('Payouts');
  const other = await h.newMerchant('Elsewhere');
  await topUp(h, m, 'XOF', '100000');
  const ann = await newCustomer(h, m, 'SN', '+221770000001');
  const bob = await newCustomer(h, m, 'SN', '+221770000002');
  const recipient = (phone: string) => ({
    country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye',
  });
  const payout = async (customer: string, phone: string) => {
    const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'));
    const r = await h.as(m, 'POST', '/payouts', { quote_id: q.id, customer_id: customer, payment_reason_text: 'x', recipient: recipient(phone) }, { idem: true });
    if (r.status !== 201) throw new Error(`payout: ${r.status} ${r.text}`);
    return r.body as { id: string; created_at: string };
  };
  // Oldest first: ann pending (…98 never settles), ann failed (…99), bob completed.
  const p1 = await payout(ann, '+221770000098');
  const p2 = await payout(ann, '+221770000099');
  const p3 = await payout(bob, '+221770000003');
  t.equal((await settled(h, m, 'payouts', p2.id)).status, 'failed');
  t.equal((await settled(h, m, 'payouts', p3.id)).status, 'completed');
  t.ok(p1.created_at < p2.created_at && p2.created_at < p3.created_at, 'distinct creation times');

  t.same(await ids(t, m, '/payouts'), [p3.id, p2.id, p1.id]);
  t.same(await ids(t, m, '/payouts?status=pending'), [p1.id]);
  t.same(await ids(t, m, '/payouts?status=failed'), [p2.id]);
  t.same(await ids(t, m, '/payouts?status=completed'), [p3.id]);
  t.same(await ids(t, m, '/payouts?status=created'), []);
  t.same(await ids(t, m, `/payouts?customer_id=${ann}`), [p2.id, p1.id]);
  t.same(await ids(t, m, `/payouts?customer_id=${bob}`), [p3.id]);
  t.same(await ids(t, m, `/payouts?customer_id=${randomUUID()}`), []);
  t.same(await ids(t, m, `/payouts?created_from=${enc(p2.created_at)}`), [p3.id, p2.id], 'created_from is inclusive');
  t.same(await ids(t, m, `/payouts?created_to=${enc(p2.created_at)}`), [p2.id, p1.id], 'created_to is inclusive');
  t.same(await ids(t, m, `/payouts?created_from=${enc(p2.created_at)}&created_to=${enc(p2.created_at)}`), [p2.id]);
  t.same(await ids(t, m, `/payouts?created_from=${enc(new Date(Date.parse(p3.created_at) + 1).toISOString())}`), [], 'after the last: nothing');
  t.same(await ids(t, m, `/payouts?customer_id=${ann}&status=failed`), [p2.id], 'filters combine');
  t.same(await ids(t, m, `/payouts?customer_id=${ann}&created_from=${enc(p2.created_at)}`), [p2.id]);
  t.same(await ids(t, m, `/payouts?customer_id=${bob}&status=pending`), []);

  const page1 = await h.as(m, 'GET', `/payouts?customer_id=${ann}&limit=1`);
  t.same(page1.body.data.map((x: { id: string }) => x.id), [p2.id]);
  t.equal(page1.body.has_more, true);
  const page2 = await h.as(m, 'GET', `/payouts?customer_id=${ann}&limit=1&cursor=${page1.body.next_cursor}`);
  t.same(page2.body.data.map((x: { id: string }) => x.id), [p1.id], 'the filter holds across pages');
  t.equal(page2.body.has_more, false);
  t.equal(page2.body.next_cursor, null);

  t.same(await ids(t, other, '/payouts'), [], 'another merchant sees none of them');
  t.same(await ids(t, other, `/payouts?customer_id=${ann}`), []);
  const bad: Array<[string, string]> = [
    ['status=shiny', 'query.status'], ['customer_id=nope', 'query.customer_id'],
    ['created_from=yesterday', 'query.created_from'], ['created_to=2026-13-01', 'query.created_to'],
  ];
  for (const [q, field] of bad) {
    const r = await h.as(m, 'GET', `/payouts?${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.body.error.code, 'bad_request');
    t.ok(r.body.error.details.some((d: { field: string }) => d.field === field), `${q} names ${field}`);
  }
});
