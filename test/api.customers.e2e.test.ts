// Customers over HTTP (seed "Customer"; CONTRACT.md §5, §8): create, read, list, scoping, validation.
import t from 'tap';
import { startTestApp, request, type MerchantCreds } from './helpers/app.ts';
import { ManualClock } from '../infra/clock.ts';
import { requestHash } from '../commands/idempotency.ts';
import { createCustomer } from '../commands/customers.ts';
import { streams } from '../commands/streams.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
const h = await startTestApp({ clock });
t.teardown(() => h.stop());

const PROFILE_FIELDS = [
  'first_name', 'last_name', 'business_name', 'id_number', 'phone', 'email', 'country_code', 'nationality_code',
  'date_of_birth', 'address_line1', 'city', 'occupation', 'source_of_funds', 'external_ref', 'metadata',
];

const create = (m: MerchantCreds, body: unknown, idem: string | boolean = true) => h.as(m, 'POST', '/customers', body, { idem });
const detailFields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: any) => d.field).sort();
const withoutMeta = (b: any) => {
  const { _meta, ...rest } = b;
  return rest;
};

t.test('create an individual with every field: 201, the record echoes every field, GET answers the same', async (t) => {
  const m = await h.newMerchant('Full');
  const sent = {
    customer_type: 'individual', first_name: 'Awa', last_name: 'Diop', id_number: 'SN-123456',
    phone: '77 123 45 67', email: 'awa@example.com', country_code: 'SN', nationality_code: 'SN', date_of_birth: '1990-04-12',
    address_line1: '12 rue Carnot', city: 'Dakar', occupation: 'Trader', source_of_funds: 'Salary',
    external_ref: 'crm-42', metadata: { segment: 'gold', channel: 'app' },
  };
  const r = await create(m, sent);
  t.equal(r.status, 201);
  t.match(r.body, { ...sent, phone: '+221771234567' }, 'every field sent, the phone in E.164');
  t.match(r.body, { id: /^[0-9a-f-]{36}$/, merchant_id: m.merchantId, kyc_status: 'not_started', created_at: '2026-06-01T10:00:00.000Z', updated_at: '2026-06-01T10:00:00.000Z' });
  t.equal(r.body.business_name, null, 'a field not sent is null');
  t.match(r.body._meta, { idempotency_key: String, idempotency_replayed: false });
  const got = await h.as(m, 'GET', `/customers/${r.body.id}`);
  t.equal(got.status, 200, 'readable at once (read-your-writes)');
  t.same(got.body, withoutMeta(r.body), 'GET answers what the create answered');
});

t.test('customer_type defaults to individual; fields not sent are present as null', async (t) => {
  const m = await h.newMerchant('Minimal');
  const r = await create(m, { first_name: 'Jean', last_name: 'Mbarga' });
  t.equal(r.status, 201);
  t.equal(r.body.customer_type, 'individual');
  for (const f of PROFILE_FIELDS.filter((f) => !['first_name', 'last_name', 'metadata'].includes(f))) t.equal(r.body[f], null, `${f} is null`);
  t.same(Object.keys(withoutMeta(r.body)).sort(), [...PROFILE_FIELDS, 'id', 'merchant_id', 'customer_type', 'kyc_status', 'created_at', 'updated_at'].sort());
});

t.test('required identity fields by type: 400 bad_request naming each missing field', async (t) => {
  const m = await h.newMerchant('Required');
  const cases: Array<[unknown, string[]]> = [
    [{}, ['first_name', 'last_name']],
    [{ customer_type: 'individual', first_name: 'A' }, ['last_name']],
    [{ customer_type: 'retail', first_name: 'A', last_name: 'B' }, ['id_number']],
    [{ customer_type: 'retail' }, ['first_name', 'id_number', 'last_name']],
    [{ customer_type: 'business', first_name: 'A', last_name: 'B' }, ['business_name']],
    [{ customer_type: 'individual', first_name: ' ', last_name: 'B' }, ['first_name']],
  ];
  for (const [body, missing] of cases) {
    const r = await create(m, body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.equal(r.body.error.code, 'bad_request');
    t.same(detailFields(r), missing, `${JSON.stringify(body)} names ${missing.join(', ')}`);
  }
  t.equal((await create(m, { customer_type: 'retail', first_name: 'A', last_name: 'B', id_number: 'CNI-9' })).status, 201);
  const biz = await create(m, { customer_type: 'business', business_name: 'Acme SARL' });
  t.equal(biz.status, 201);
  t.match(biz.body, { customer_type: 'business', business_name: 'Acme SARL', first_name: null });
});

t.test('schema: unknown fields, formats, lengths, types and metadata limits are 400 naming the field', async (t) => {
  const m = await h.newMerchant('Schema');
  const base = { first_name: 'A', last_name: 'B' };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ nickname: 'x' }, 'nickname'],
    [{ email: 'not-an-email' }, 'email'],
    [{ customer_type: 'robot' }, 'customer_type'],
    [{ external_ref: 'x'.repeat(256) }, 'external_ref'],
    [{ first_name: 'x'.repeat(101) }, 'first_name'],
    [{ city: '' }, 'city'],
    [{ first_name: 12 }, 'first_name'],
    [{ country_code: 'sn' }, 'country_code'],
    [{ nationality_code: 'SEN' }, 'nationality_code'],
    [{ date_of_birth: '1990-4-12' }, 'date_of_birth'],
    [{ date_of_birth: '2023-02-30' }, 'date_of_birth'],
    [{ metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    [{ metadata: { nested: { a: 'b' } } }, 'metadata.nested'],
    [{ metadata: { n: 1 } }, 'metadata.n'],
    [{ metadata: { long: 'x'.repeat(501) } }, 'metadata.long'],
    [{ phone: 'x'.repeat(33) }, 'phone'],
  ];
  for (const [extra, field] of cases) {
    const r = await create(m, { ...base, ...extra });
    t.equal(r.status, 400, JSON.stringify(extra).slice(0, 80));
    t.equal(r.body.error.code, 'bad_request');
    t.ok(detailFields(r).includes(field), `names ${field}: ${JSON.stringify(r.body.error.details)}`);
  }
  const ok = await create(m, { ...base, metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'.repeat(500)])), external_ref: 'x'.repeat(255) });
  t.equal(ok.status, 201, '20 metadata keys of 500 characters and a 255-character external_ref are accepted');
});

t.test('date_of_birth in the future is refused', async (t) => {
  const m = await h.newMerchant('Dob');
  const r = await create(m, { first_name: 'A', last_name: 'B', date_of_birth: '2026-06-03' });
  t.equal(r.status, 400);
  t.same(detailFields(r), ['date_of_birth']);
  t.equal((await create(m, { first_name: 'A', last_name: 'B', date_of_birth: '2026-06-01' })).status, 201, 'born today');
});

t.test('phone: normalised to E.164 for country_code, refused when not that country\'s or not a number', async (t) => {
  const m = await h.newMerchant('Phones');
  const ok = [
    [{ phone: '677123456', country_code: 'CM' }, '+237677123456'],
    [{ phone: '0197123456', country_code: 'BJ' }, '+2290197123456'],
    [{ phone: '97123456', country_code: 'BJ' }, '+22997123456'],
    [{ phone: '+228 90 12 34 56', country_code: 'TG' }, '+22890123456'],
    [{ phone: '+2250707123456' }, '+2250707123456'],
  ] as const;
  for (const [fields, e164] of ok) {
    const r = await create(m, { first_name: 'A', last_name: 'B', ...fields });
    t.equal(r.status, 201, JSON.stringify(fields));
    t.equal(r.body.phone, e164);
  }
  for (const fields of [{ phone: '+237677123456', country_code: 'SN' }, { phone: '12345', country_code: 'CM' }, { phone: '677123456' }, { phone: '+33612345678' }]) {
    const r = await create(m, { first_name: 'A', last_name: 'B', ...fields });
    t.equal(r.status, 400, JSON.stringify(fields));
    t.equal(r.body.error.code, 'bad_request');
    t.same(detailFields(r), ['phone']);
  }
});

t.test('GET: unknown id, malformed id and another merchant\'s customer get the same 404', async (t) => {
  const a = await h.newMerchant('A');
  const b = await h.newMerchant('B');
  const mine = await create(a, { first_name: 'A', last_name: 'B' });
  const answers = [
    await h.as(b, 'GET', `/customers/${mine.body.id}`),
    await h.as(b, 'GET', '/customers/5b0c3f9e-7a2d-4c1e-9f3b-2d8e6a4c1b7f'),
    await h.as(b, 'GET', '/customers/not-a-uuid'),
  ];
  for (const r of answers) {
    t.equal(r.status, 404);
    t.equal(r.body.error.code, 'not_found');
  }
  t.same(answers[0]!.body.error.message, answers[1]!.body.error.message, 'another merchant\'s customer: the very answer of an unknown id');
  t.same(Object.keys(answers[0]!.body.error).sort(), Object.keys(answers[1]!.body.error).sort());
  t.equal((await h.as(a, 'GET', `/customers/${mine.body.id}`)).status, 200);
  t.equal((await request(h.url, 'GET', `/customers/${mine.body.id}`)).status, 401, 'no credentials: 401');
});

t.test('list: newest first, cursor pages cover everything once, scoped to the merchant', async (t) => {
  const m = await h.newMerchant('Lister');
  const other = await h.newMerchant('Other');
  await create(other, { first_name: 'Not', last_name: 'Mine' });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(1000);
    ids.push((await create(m, { first_name: `C${i}`, last_name: 'X' })).body.id);
  }
  // Three more in one same millisecond: the id breaks the tie.
  clock.advance(1000);
  for (let i = 5; i < 8; i++) ids.push((await create(m, { first_name: `C${i}`, last_name: 'X' })).body.id);

  const all = await h.as(m, 'GET', '/customers');
  t.equal(all.status, 200);
  t.equal(all.body.data.length, 8, 'default limit 20 holds all 8');
  t.equal(all.body.has_more, false);
  t.equal(all.body.next_cursor, null);
  const order = all.body.data.map((c: any) => c.id);
  t.same(order.slice(3), ids.slice(0, 5).reverse(), 'newest first');
  t.same([...order.slice(0, 3)].sort(), ids.slice(5).sort(), 'same-millisecond customers first');
  t.same(order.slice(0, 3), [...order.slice(0, 3)].sort().reverse(), 'ties in id order (descending)');
  t.notOk(order.includes(undefined));
  t.same(all.body.data[0], withoutMeta((await h.as(m, 'GET', `/customers/${order[0]}`)).body), 'list items are the customer record');

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
    const page: any = await h.as(m, 'GET', `/customers${q}`);
    t.equal(page.status, 200);
    t.ok(page.body.data.length <= 3);
    seen.push(...page.body.data.map((c: any) => c.id));
    t.equal(page.body.has_more, page.body.next_cursor !== null);
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 3);
  t.same(seen, order, 'pages concatenate to the full list, no duplicate, no gap');

  // A customer created between pages goes before page one, never into later pages.
  const first = await h.as(m, 'GET', '/customers?limit=4');
  clock.advance(1000);
  await create(m, { first_name: 'Late', last_name: 'Comer' });
  const second = await h.as(m, 'GET', `/customers?limit=4&cursor=${first.body.next_cursor}`);
  t.same(second.body.data.map((c: any) => c.id), order.slice(4));
});

t.test('list: filters status (KYC), created_from/created_to, external_ref', async (t) => {
  const m = await h.newMerchant('Filters');
  clock.advance(60_000);
  const t0 = clock.now().toISOString();
  const a = await create(m, { first_name: 'A', last_name: 'X', external_ref: 'ref-a' });
  clock.advance(60_000);
  const t1 = clock.now().toISOString();
  const b = await create(m, { first_name: 'B', last_name: 'X', external_ref: 'ref-b' });
  clock.advance(60_000);
  const c = await create(m, { first_name: 'C', last_name: 'X', external_ref: 'ref-b' });
  const ids = async (q: string) => {
    const r = await h.as(m, 'GET', `/customers${q}`);
    t.equal(r.status, 200, q);
    return r.body.data.map((x: any) => x.id);
  };
  t.same(await ids(`?created_from=${encodeURIComponent(t1)}`), [c.body.id, b.body.id], 'from is inclusive');
  t.same(await ids(`?created_to=${encodeURIComponent(t1)}`), [b.body.id, a.body.id], 'to is inclusive');
  t.same(await ids(`?created_from=${encodeURIComponent(t0)}&created_to=${encodeURIComponent(t0)}`), [a.body.id]);
  t.same(await ids('?external_ref=ref-b'), [c.body.id, b.body.id]);
  t.same(await ids('?external_ref=nope'), []);
  t.same(await ids('?status=not_started'), [c.body.id, b.body.id, a.body.id]);
  t.same(await ids('?status=verified'), []);
  const paged = await h.as(m, 'GET', '/customers?external_ref=ref-b&limit=1');
  t.same(paged.body.data.map((x: any) => x.id), [c.body.id]);
  t.same(await ids(`?external_ref=ref-b&limit=1&cursor=${paged.body.next_cursor}`), [b.body.id], 'filters apply with the cursor');
});

t.test('list: kyc_status filters like status, and dates are whole UTC days (issue 31)', async (t) => {
  const m = await h.newMerchant('KycStatusAndDates');
  clock.advance(60_000);
  const a = await create(m, { first_name: 'A', last_name: 'X' });
  clock.advance(60_000);
  const b = await create(m, { first_name: 'B', last_name: 'X' });
  const ids = async (q: string) => {
    const r = await h.as(m, 'GET', `/customers${q}`);
    t.equal(r.status, 200, `${q}: ${JSON.stringify(r.body.error ?? '')}`);
    return r.body.data?.map((x: any) => x.id);
  };
  t.same(await ids('?kyc_status=not_started'), [b.body.id, a.body.id], 'kyc_status, the field\'s own name');
  t.same(await ids('?kyc_status=verified'), []);
  t.same(await ids('?status=not_started'), [b.body.id, a.body.id], 'status still works');
  t.same(await ids('?status=not_started&kyc_status=verified'), [], 'both must match');
  const bad = await h.as(m, 'GET', '/customers?kyc_status=shiny');
  t.equal(bad.status, 400);
  t.ok(detailFields(bad).includes('query.kyc_status'));

  const day = (iso: string) => iso.slice(0, 10);
  const dayOf = day(a.body.created_at);
  t.equal(day(b.body.created_at), dayOf, 'both created the same day');
  const next = day(new Date(Date.parse(`${dayOf}T00:00:00Z`) + 86_400_000).toISOString());
  const previous = day(new Date(Date.parse(`${dayOf}T00:00:00Z`) - 86_400_000).toISOString());
  t.same(await ids(`?created_from=${dayOf}`), [b.body.id, a.body.id], 'created_from=<date>: from the start of that day');
  t.same(await ids(`?created_from=${next}`), []);
  t.same(await ids(`?created_to=${dayOf}`), [b.body.id, a.body.id], 'created_to=<date>: that whole day included');
  t.same(await ids(`?created_to=${previous}`), []);
  t.same(await ids(`?created_from=${dayOf}&created_to=${dayOf}`), [b.body.id, a.body.id], 'one day, both bounds');
  const notADay = await h.as(m, 'GET', '/customers?created_from=2026-02-30');
  t.equal(notADay.status, 400, 'a date that does not exist is refused');
  t.same(notADay.body.error.details, [{ field: 'query.created_from', message: 'must match format "date-time" or must match format "date"' }], 'one problem, one detail');
});

t.test('create: every problem of a body in one answer, the schema\'s and the phone\'s and the birth date\'s (issue 31)', async (t) => {
  const m = await h.newMerchant('OnePass');
  const r = await create(m, { first_name: 'Awa', email: 'not-an-email', phone: '+237677123456', country_code: 'SN', date_of_birth: '2999-01-01' });
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'bad_request');
  t.same(detailFields(r), ['date_of_birth', 'email', 'last_name', 'phone'], `one 400 names them all: ${JSON.stringify(r.body.error.details)}`);
  const wrongTypes = await create(m, { first_name: 'Awa', last_name: 'Diop', phone: 237677123456, date_of_birth: 19900101 });
  t.equal(wrongTypes.status, 400, 'a field of the wrong type is the schema\'s to report, once');
  t.same(detailFields(wrongTypes), ['date_of_birth', 'phone']);
  t.equal((await h.as(m, 'GET', '/customers')).body.data.length, 0, 'nothing created');
});

t.test('metadata not sent is {} on customers as on payins and payouts: one rule (issue 31)', async (t) => {
  const m = await h.newMerchant('MetadataRule');
  const c = await create(m, { first_name: 'Jean', last_name: 'Mbarga', phone: '+237670000001', country_code: 'CM' });
  t.same(c.body.metadata, {}, 'the create answer');
  t.same((await h.as(m, 'GET', `/customers/${c.body.id}`)).body.metadata, {}, 'GET');
  t.same((await h.as(m, 'GET', '/customers')).body.data[0].metadata, {}, 'the list');
  const kept = await create(m, { first_name: 'Awa', last_name: 'Diop', metadata: { crm: '7' } });
  t.same((await h.as(m, 'GET', `/customers/${kept.body.id}`)).body.metadata, { crm: '7' }, 'metadata sent is kept');
  const leg = { country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', send_amount: '5000', send_currency: 'XAF' };
  const party = { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000098' };
  const pq = await h.as(m, 'POST', '/quotes/payin', { ...leg, customer_id: c.body.id }, { idem: true });
  const payin = await h.as(m, 'POST', '/payins', { quote_id: pq.body.id, customer_id: c.body.id, source: party }, { idem: true });
  t.equal(payin.status, 201, JSON.stringify(payin.body.error ?? ''));
  t.same(payin.body.metadata, {}, 'a payin');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/XAF/top-ups`, { amount: '100000' })).status, 201);
  const oq = await h.as(m, 'POST', '/quotes/payout', { ...leg, customer_id: c.body.id }, { idem: true });
  const payout = await h.as(m, 'POST', '/payouts', {
    quote_id: oq.body.id, customer_id: c.body.id, payment_reason_text: 'Refund', recipient: { ...party, recipient_type: 'individual' },
  }, { idem: true });
  t.equal(payout.status, 201, JSON.stringify(payout.body.error ?? ''));
  t.same(payout.body.metadata, {}, 'a payout');
});

t.test('list: bad parameters are 400 bad_request naming the parameter', async (t) => {
  const m = await h.newMerchant('BadParams');
  await create(m, { first_name: 'A', last_name: 'X' });
  const cases: Array<[string, string]> = [
    ['?limit=0', 'query.limit'],
    ['?limit=101', 'query.limit'],
    ['?limit=ten', 'query.limit'],
    ['?status=shiny', 'query.status'],
    ['?created_from=yesterday', 'query.created_from'],
    ['?cursor=not-a-cursor', 'query.cursor'],
    [`?cursor=${Buffer.from('["2026-01-01T00:00:00Z","x"]').toString('base64url')}`, 'query.cursor'],
    [`?cursor=${Buffer.from('{"a":1}').toString('base64url')}`, 'query.cursor'],
    ['?customer_id=not-a-uuid', 'query.customer_id'],
    ['?colour=red', 'query.colour'],
  ];
  for (const [q, field] of cases) {
    const r = await h.as(m, 'GET', `/customers${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.body.error.code, 'bad_request');
    t.ok(detailFields(r).includes(field), `${q} names ${field}: ${JSON.stringify(r.body.error.details)}`);
  }
  t.equal((await h.as(m, 'GET', '/customers?limit=100')).status, 200);
  t.equal((await h.as(m, 'GET', '/customers?limit=1')).body.data.length, 1);
});

t.test('a retry that finds the customer stream already written answers the existing customer', async (t) => {
  // The first attempt claimed the key, appended customer.created, and died before storing its answer.
  const m = await h.newMerchant('Crash');
  const sent = { first_name: 'Awa', last_name: 'Diop', phone: '+221771234567' };
  const key = 'crash-retry-1';
  const s = h.app.services;
  const claim = await s.idempotency.claim(m.merchantId, key, 'POST', '/customers', requestHash(s.secrets, 'POST', '/customers', sent));
  if (claim.kind !== 'run') throw new Error('expected a fresh claim');
  await createCustomer(s, { customerId: claim.resourceId, merchantId: m.merchantId, customerType: 'individual', profile: sent }, {});
  const busy = await create(m, sent, key);
  t.equal(busy.status, 409, 'while the first attempt holds its lease');
  t.equal(busy.body.error.code, 'idempotency_in_progress');
  clock.advance(31_000);
  const r = await create(m, sent, key);
  t.equal(r.status, 201, 'after the lease, the retry takes over the claim');
  t.equal(r.body.id, claim.resourceId, 'with the same customer id');
  t.match(r.body, sent);
  t.equal((await s.store.readStream(streams.customer(claim.resourceId))).length, 1, 'no second customer.created');
  const list = await h.as(m, 'GET', '/customers');
  t.same(list.body.data.map((c: any) => c.id), [claim.resourceId], 'one customer');
});

t.test('the OpenAPI document describes customers', async (t) => {
  const doc = (await request(h.url, 'GET', '/openapi.json')).body;
  t.ok(doc.paths['/customers'].post['x-idempotent']);
  t.ok(doc.paths['/customers'].get);
  t.ok(doc.paths['/customers/{customer_id}'].get);
  t.match(doc.components.schemas.Customer.description, /null when it was not sent/);
  t.same(doc.components.schemas.CustomerCreate.properties.customer_type.enum, ['individual', 'retail', 'business']);
});
