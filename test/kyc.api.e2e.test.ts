// KYC over HTTP (issue 6) against a local file server on 127.0.0.1 (ALLOW_PRIVATE_URLS=true, as for
// local testing): submission and its validation, GET before and after, another merchant's customer,
// the review of a real PNG and PDF, a 404, an oversized file, a slow file, a non-image; resubmission
// rules; kyc_status on the customer record; the events on the customer stream; an idempotent worker.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { newCustomer, passport, reviewed, startFileServer, until } from './helpers/kyc.ts';
import { KYC_REVIEW_JOB, reviewStep, reviewKey } from '../workers/kyc-review.ts';

const files = await startFileServer();
t.teardown(() => files.close());
const FETCH_TIMEOUT_MS = 2500; // generous: a loaded test machine is slow even on loopback
const h = await startTestApp({ env: { KYC_FETCH_TIMEOUT_MS: String(FETCH_TIMEOUT_MS) } });
t.teardown(() => h.stop());
const s = h.app.services;
const f = (p: string) => `${files.url}${p}`;

const kyc = (m: Parameters<TestApp['as']>[0], customerId: string, body: unknown) => h.as(m, 'POST', `/customers/${customerId}/kyc`, body);
const streamTypes = async (customerId: string) => (await s.store.readStream(`customer-${customerId}`, 1)).map((e) => e.type);

t.test('GET before any submission: not_started, no documents; the customer record says not_started', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const r = await h.as(m, 'GET', `/customers/${c}/kyc`);
  t.equal(r.status, 200);
  t.same(r.body, { customer_id: c, kyc_status: 'not_started', documents: [] });
  t.equal((await h.as(m, 'GET', `/customers/${c}`)).body.kyc_status, 'not_started');
});

t.test('submission: 201 pending with uploaded documents (ids, created_at, every field); no Idempotency-Key needed; then verified', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const r = await kyc(m, c, { documents: [passport({ front_file_url: f('/id.png'), selfie_file_url: f('/doc.pdf') })] });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.customer_id, c);
  t.equal(r.body.kyc_status, 'pending');
  t.equal(r.body.documents.length, 1);
  const [d] = r.body.documents;
  t.match(d, {
    id: /^[0-9a-f-]{36}$/, document_type: 'passport', document_number: 'A1234567', issue_country_code: 'SN',
    issue_date: '2020-01-15', expiry_date: '2035-01-14', front_file_url: f('/id.png'), back_file_url: null,
    selfie_file_url: f('/doc.pdf'), status: 'uploaded', rejection_reason: null,
  });
  t.ok(!Number.isNaN(Date.parse(d.created_at)), 'created_at is a date-time');
  t.same(Object.keys(r.body).sort(), ['customer_id', 'documents', 'kyc_status']);

  const got = await h.as(m, 'GET', `/customers/${c}/kyc`);
  t.equal(got.status, 200);
  if (got.body.kyc_status === 'pending') t.same(got.body, r.body, 'GET right after POST answers the same record');
  t.equal((await h.as(m, 'GET', `/customers/${c}`)).body.kyc_status === 'not_started', false, 'the customer record has moved on');

  const done = await reviewed(h, m, c);
  t.equal(done.kyc_status, 'verified');
  t.match(done.documents, [{ id: d.id, status: 'verified', rejection_reason: null, created_at: d.created_at }]);
  const customer = await h.as(m, 'GET', `/customers/${c}`);
  t.equal(customer.body.kyc_status, 'verified', 'kyc_status on the customer record');
  t.ok(Date.parse(customer.body.updated_at) > Date.parse(customer.body.created_at), 'updated_at moved');
  const list = await h.as(m, 'GET', '/customers?status=verified');
  t.ok(list.body.data.some((x: { id: string }) => x.id === c), 'the list filters on kyc_status');

  t.same(await streamTypes(c), ['customer.created', 'customer.kyc_submitted', 'customer.kyc_document_checked', 'customer.kyc_reviewed'],
    'the history is on the customer stream');
  const events = await s.store.readStream(`customer-${c}`, 1);
  t.match(events[2]!.data, {
    files: [
      { field: 'front_file_url', outcome: 'fetched', content_type: 'image/png', size_bytes: Number, sha256: /^[0-9a-f]{64}$/ },
      { field: 'selfie_file_url', outcome: 'fetched', content_type: 'application/pdf' },
    ],
  }, 'what was fetched: type from the bytes, size, digest');
});

t.test('review: a real PNG and PDF verify; a 404, an oversized file, a slow file, a non-image and an empty file reject, each with its reason', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const r = await kyc(m, c, {
    documents: [
      passport({ front_file_url: f('/id.png'), back_file_url: f('/doc.pdf') }),
      passport({ front_file_url: f('/missing') }, { document_number: 'B-404' }),
      passport({ front_file_url: f('/huge') }, { document_number: 'B-HUGE' }),
      passport({ front_file_url: f('/slow') }, { document_number: 'B-SLOW' }),
      passport({ front_file_url: f('/text') }, { document_number: 'B-TEXT' }),
      passport({ front_file_url: f('/id.png'), selfie_file_url: f('/empty') }, { document_number: 'B-EMPTY' }),
      passport({ front_file_url: f('/huge-declared') }, { document_number: 'B-DECLARED' }),
      passport({ front_file_url: f('/photo.txt') }, { document_number: 'B-LYING-TYPE' }),
    ],
  });
  t.equal(r.status, 201, r.text);
  t.ok(r.body.documents.every((d: { status: string }) => d.status === 'uploaded'));
  const started = Date.now();
  const done = await reviewed(h, m, c);
  t.equal(done.kyc_status, 'rejected', 'rejected unless every document is verified');
  const by = Object.fromEntries(done.documents.map((d: { document_number: string }) => [d.document_number, d]));
  t.match(by['A1234567'], { status: 'verified', rejection_reason: null }, 'PNG and PDF');
  t.match(by['B-LYING-TYPE'], { status: 'verified', rejection_reason: null }, 'judged from the bytes, not the name or Content-Type');
  t.match(by['B-404'], { status: 'rejected', rejection_reason: 'front_file_url: the server answered HTTP 404' });
  t.match(by['B-HUGE'], { status: 'rejected', rejection_reason: /^front_file_url: larger than 10485760 bytes$/ });
  t.match(by['B-DECLARED'], { status: 'rejected', rejection_reason: /^front_file_url: larger than 10485760 bytes \(Content-Length 11534336\)$/ });
  t.match(by['B-SLOW'], { status: 'rejected', rejection_reason: `front_file_url: not received within ${FETCH_TIMEOUT_MS} ms` });
  t.match(by['B-TEXT'], { status: 'rejected', rejection_reason: /^front_file_url: not an image or a PDF/ });
  t.match(by['B-EMPTY'], { status: 'rejected', rejection_reason: 'selfie_file_url: the file is empty' }, 'only the failed file is named');
  t.same(done.documents.map((d: { document_number: string }) => d.document_number), r.body.documents.map((d: { document_number: string }) => d.document_number), 'in the order sent');
  t.equal(files.hugeFinished, 0, 'the oversized download was cut while streaming, never read to its end');
  t.ok(files.hugeCut >= 1);
  t.ok(Date.now() - started < 30_000);
  t.equal((await h.as(m, 'GET', `/customers/${c}`)).body.kyc_status, 'rejected');
});

t.test('resubmission: 409 while pending; after rejected a new review; 409 once verified; the whole history stays', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const first = await kyc(m, c, { documents: [passport({ front_file_url: f('/slow') })] });
  t.equal(first.status, 201);
  const pending = await kyc(m, c, { documents: [passport({ front_file_url: f('/id.png') })] });
  t.equal(pending.status, 409, 'a review is running');
  t.equal(pending.body.error.code, 'kyc_review_pending');
  t.equal((await reviewed(h, m, c)).kyc_status, 'rejected');

  const second = await kyc(m, c, { documents: [passport({ front_file_url: f('/id.png') }, { document_type: 'national_id', document_number: 'SN-2' })] });
  t.equal(second.status, 201, 'after a rejection, a new submission');
  t.equal(second.body.kyc_status, 'pending');
  t.same(second.body.documents.map((d: { document_number: string; status: string }) => [d.document_number, d.status]), [['SN-2', 'uploaded']], 'the new submission\'s documents');
  t.not(second.body.documents[0].id, first.body.documents[0].id);
  const done = await reviewed(h, m, c);
  t.equal(done.kyc_status, 'verified');
  t.same(done.documents.map((d: { id: string }) => d.id), [second.body.documents[0].id]);

  const again = await kyc(m, c, { documents: [passport({ front_file_url: f('/id.png') })] });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'kyc_already_verified');
  t.same(await streamTypes(c), [
    'customer.created',
    'customer.kyc_submitted', 'customer.kyc_document_checked', 'customer.kyc_reviewed',
    'customer.kyc_submitted', 'customer.kyc_document_checked', 'customer.kyc_reviewed',
  ], 'every submission and verdict is kept');
  const oldDoc = await s.knex('kyc_documents').where({ id: first.body.documents[0].id }).first();
  t.match(oldDoc, { status: 'rejected', rejection_reason: /not received within/ }, 'the earlier document stays in the read model');
});

t.test('validation: 400 bad_request naming each field (schema and domain rules)', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const png = { front_file_url: f('/id.png') };
  const cases: Array<[string, unknown, string[]]> = [
    ['no body field', {}, ['documents']],
    ['no documents', { documents: [] }, ['documents']],
    ['too many', { documents: Array.from({ length: 11 }, () => passport(png)) }, ['documents']],
    ['no file URL', { documents: [passport({})] }, ['documents.0.front_file_url', 'documents.0.back_file_url', 'documents.0.selfie_file_url']],
    ['three-letter country', { documents: [passport(png, { issue_country_code: 'SEN' })] }, ['documents.0.issue_country_code']],
    ['lowercase country', { documents: [passport(png, { issue_country_code: 'sn' })] }, ['documents.0.issue_country_code']],
    ['not YYYY-MM-DD', { documents: [passport(png, { issue_date: '15/01/2020' })] }, ['documents.0.issue_date']],
    ['no such day', { documents: [passport(png, { expiry_date: '2031-02-30' })] }, ['documents.0.expiry_date']],
    ['expired', { documents: [passport(png, { expiry_date: '2001-01-01' })] }, ['documents.0.expiry_date']],
    ['issued in the future', { documents: [passport(png, { issue_date: '2999-01-01', expiry_date: '3001-01-01' })] }, ['documents.0.issue_date']],
    ['unknown document type', { documents: [passport(png, { document_type: 'library_card' })] }, ['documents.0.document_type']],
    ['missing number', { documents: [{ document_type: 'passport', issue_country_code: 'SN', ...png }] }, ['documents.0.document_number']],
    ['unknown field', { documents: [passport(png, { colour: 'blue' })] }, ['documents.0.colour']],
    ['ftp URL', { documents: [passport({ front_file_url: 'ftp://files.example/id.png' })] }, ['documents.0.front_file_url']],
    ['file URL', { documents: [passport({ front_file_url: 'file:///etc/passwd' })] }, ['documents.0.front_file_url']],
    ['URL with credentials', { documents: [passport({ front_file_url: `http://user:pw@127.0.0.1:${files.port}/id.png` })] }, ['documents.0.front_file_url']],
    ['a number as a date', { documents: [passport(png, { issue_date: 20200115 })] }, ['documents.0.issue_date']],
  ];
  for (const [name, body, fields] of cases) {
    const r = await kyc(m, c, body);
    t.equal(r.status, 400, `${name}: 400`);
    t.equal(r.body.error?.code, 'bad_request', name);
    const named = (r.body.error?.details ?? []).map((d: { field: string }) => d.field);
    for (const field of fields) t.ok(named.includes(field), `${name}: names ${field} (got ${named.join(', ')})`);
  }
  const several = await kyc(m, c, { documents: [passport(png, { expiry_date: '2001-01-01' }), passport(png, { issue_date: '2999-01-01', expiry_date: '3001-01-01' })] });
  t.same(several.body.error.details.map((d: { field: string }) => d.field).sort(), ['documents.0.expiry_date', 'documents.1.issue_date'], 'every problem in one answer');
  // The schema's problem and the clock's in one answer, not one after the other (issue 31).
  const mixed = await kyc(m, c, { documents: [passport(png, { document_type: 'library_card', expiry_date: '2001-01-01' })] });
  t.equal(mixed.status, 400);
  t.same(mixed.body.error.details.map((d: { field: string }) => d.field).sort(), ['documents.0.document_type', 'documents.0.expiry_date'], 'a schema error and an expired document in one answer');
  t.same(await h.as(m, 'GET', `/customers/${c}/kyc`).then((r) => r.body.kyc_status), 'not_started', 'nothing was recorded');
  t.same(await streamTypes(c), ['customer.created']);
});

t.test("another merchant's customer, or none: 404 on POST and GET; no credentials: 401", async (t) => {
  const owner = await h.newMerchant('Owner');
  const other = await h.newMerchant('Other');
  const c = await newCustomer(h, owner);
  const body = { documents: [passport({ front_file_url: f('/id.png') })] };
  for (const [m, id] of [[other, c], [owner, randomUUID()]] as const) {
    const post = await kyc(m, id, body);
    t.equal(post.status, 404);
    t.equal(post.body.error.code, 'not_found');
    const get = await h.as(m, 'GET', `/customers/${id}/kyc`);
    t.equal(get.status, 404);
    t.equal(get.body.error.code, 'not_found');
  }
  t.equal((await h.as(owner, 'GET', '/customers/not-a-uuid/kyc')).status, 404);
  t.equal((await fetch(`${h.url}/customers/${c}/kyc`)).status, 401);
  t.same(await streamTypes(c), ['customer.created'], 'nothing recorded for the owner');
});

t.test('the worker is idempotent: a redelivered trigger or a re-run job records nothing more', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const r = await kyc(m, c, { documents: [passport({ front_file_url: f('/id.png') })] });
  await reviewed(h, m, c);
  const before = await streamTypes(c);
  const events = await s.store.readStream(`customer-${c}`, 1);
  const submissionId = (events[1]!.data as { submission_id: string }).submission_id;
  const job = { customer_id: c, submission_id: submissionId };
  const hitsBefore = files.hits.get('/id.png') ?? 0;
  t.same(await reviewStep(s, job), undefined, 'a re-run of a decided review is done at once');
  // The trigger again (at-least-once bus), through the durable scheduler.
  await s.scheduler.schedule(KYC_REVIEW_JOB, reviewKey(job), job, s.clock.now());
  await until('the re-scheduled job ran', async () => (await s.knex('jobs').where({ kind: KYC_REVIEW_JOB, key: reviewKey(job) })).length === 0);
  t.same(await streamTypes(c), before, 'no new events');
  t.equal(files.hits.get('/id.png') ?? 0, hitsBefore, 'nothing fetched again');
  t.equal((await h.as(m, 'GET', `/customers/${c}/kyc`)).body.documents[0].id, r.body.documents[0].id);
});

t.test('redirects are followed up to the cap, each hop checked', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  await kyc(m, c, {
    documents: [
      passport({ front_file_url: f('/redirect/5') }, { document_number: 'FIVE' }),
      passport({ front_file_url: f('/redirect/6') }, { document_number: 'SIX' }),
    ],
  });
  const done = await reviewed(h, m, c);
  const by = Object.fromEntries(done.documents.map((d: { document_number: string }) => [d.document_number, d]));
  t.match(by.FIVE, { status: 'verified' }, 'five redirects are followed');
  t.match(by.SIX, { status: 'rejected', rejection_reason: 'front_file_url: more than 5 redirects' });
});

t.test('OpenAPI: the KYC operations and schemas are in the document', async (t) => {
  const doc = (await fetch(`${h.url}/openapi.json`).then((r) => r.json())) as any;
  const ops = doc.paths['/customers/{customer_id}/kyc'];
  t.ok(ops.post && ops.get);
  t.notOk(ops.post['x-idempotent'], 'no Idempotency-Key');
  t.equal(doc.components.schemas.KycSubmission.properties.documents.minItems, 1);
  t.same(doc.components.schemas.KycRecord.properties.kyc_status.enum, ['not_started', 'pending', 'verified', 'rejected']);
  t.ok(doc.components.schemas.Routing.properties.kyc_required_operators);
});
