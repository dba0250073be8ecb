// KYC on the customer aggregate as specifications: given these events, when this command, then these
// events (or this refusal). Time and ids arrive in the command; nothing here reads the clock.
import t, { type Test } from 'tap';
import { fold } from '../domain/decider.ts';
import { DomainError, InvariantViolation } from '../domain/errors.ts';
import { customerDecider, type CustomerCommand, type CustomerEvent, type CustomerState } from '../domain/customer.ts';
import {
  documentVerdict, filesOf, nextDocumentToCheck, requireKycFor, requireOwnCustomer,
  type FileCheck, type KycDocumentInput, type SubmitKyc,
} from '../domain/kyc.ts';
import { deciderSpec } from './helpers/spec.ts';

const CUSTOMER = '11111111-1111-4111-8111-111111111111';
const MERCHANT = '22222222-2222-4222-8222-222222222222';
const OTHER_MERCHANT = '33333333-3333-4333-8333-333333333333';
const SUB1 = '44444444-4444-4444-8444-444444444441';
const SUB2 = '44444444-4444-4444-8444-444444444442';
const DOC1 = '55555555-5555-4555-8555-555555555551';
const DOC2 = '55555555-5555-4555-8555-555555555552';
const DOC3 = '55555555-5555-4555-8555-555555555553';
const AT = '2026-06-01T10:00:00.000Z';
const LATER = '2026-06-01T10:00:05.000Z';

const customers = deciderSpec(customerDecider);
const given = (events: CustomerEvent[]): CustomerState => fold(customerDecider, events);

const created: CustomerEvent = {
  type: 'customer.created',
  data: { customer_id: CUSTOMER, merchant_id: MERCHANT, customer_type: 'individual', profile: { first_name: 'Awa', last_name: 'Diop' }, at: AT },
};

const passport: KycDocumentInput = {
  document_type: 'passport', document_number: 'A1234567', issue_country_code: 'SN',
  issue_date: '2020-01-15', expiry_date: '2030-01-14', front_file_url: 'https://files.example/p.png',
};
const nationalId: KycDocumentInput = {
  document_type: 'national_id', document_number: 'SN-99', issue_country_code: 'SN',
  front_file_url: 'https://files.example/front.png', back_file_url: 'https://files.example/back.png',
};

const submit = (over: Partial<SubmitKyc> = {}): CustomerCommand => ({
  type: 'SubmitKyc',
  data: { merchantId: MERCHANT, submissionId: SUB1, documents: [{ ...passport, documentId: DOC1 }], refusedUrls: [], at: AT, ...over },
});
const check = (documentId: string, files: FileCheck[], submissionId = SUB1): CustomerCommand => ({
  type: 'RecordKycDocumentCheck', data: { submissionId, documentId, files, at: LATER },
});
const complete = (submissionId = SUB1): CustomerCommand => ({ type: 'CompleteKycReview', data: { submissionId, at: LATER } });

const submitted = (submissionId = SUB1, documents: Array<KycDocumentInput & { document_id: string }> = [{ ...passport, document_id: DOC1 }], at = AT): CustomerEvent => ({
  type: 'customer.kyc_submitted',
  data: { customer_id: CUSTOMER, merchant_id: MERCHANT, submission_id: submissionId, documents, at },
});
const fetched = (field: FileCheck['field']): FileCheck => ({ field, outcome: 'fetched', content_type: 'image/png', size_bytes: 68, sha256: 'ab'.repeat(32) });
const failed = (field: FileCheck['field'], message = 'the server answered HTTP 404'): FileCheck => ({ field, outcome: 'failed', failure: 'http_error', message });
const checked = (documentId: string, files: FileCheck[], submissionId = SUB1): CustomerEvent => ({
  type: 'customer.kyc_document_checked',
  data: { customer_id: CUSTOMER, submission_id: submissionId, document_id: documentId, files, at: LATER },
});
const reviewed = (status: 'verified' | 'rejected', submissionId = SUB1): CustomerEvent => ({
  type: 'customer.kyc_reviewed',
  data: {
    customer_id: CUSTOMER, submission_id: submissionId, kyc_status: status,
    documents: [{ document_id: DOC1, status, rejection_reason: status === 'rejected' ? 'front_file_url: the server answered HTTP 404' : null }],
    at: LATER,
  },
});

/** The fields a bad_request names, given these events, when this command. */
function badRequest(t: Test, history: CustomerEvent[], command: CustomerCommand): string[] {
  const e = customers.given(history).when(command).thenThrows(t, 'bad_request');
  return (e?.details ?? []).map((d) => d.field);
}
/** The events decided, given these events, when this command. */
const decided = (history: CustomerEvent[], command: CustomerCommand) => customers.given(history).when(command).events();

t.test('given a customer, when documents are submitted, then customer.kyc_submitted with their ids; status pending, documents uploaded', async (t) => {
  customers.given([created]).when(submit()).then(t, [submitted()]);
  const s = given([created, submitted()]);
  t.equal(s.kycStatus, 'pending');
  t.equal(s.updatedAt, AT);
  t.same(s.kyc.current?.documents, [{ ...passport, id: DOC1, status: 'uploaded', rejection_reason: null, created_at: AT }]);
});

t.test('only the fields sent are recorded (no undefined keys in the event)', async (t) => {
  const [e] = decided([created], submit({ documents: [{ ...nationalId, documentId: DOC2 }] }));
  t.same(Object.keys((e!.data as { documents: object[] }).documents[0]!).sort(),
    ['back_file_url', 'document_id', 'document_number', 'document_type', 'front_file_url', 'issue_country_code']);
});

t.test('given no customer, or another merchant\'s, when submitting, then not_found', async (t) => {
  customers.given([]).when(submit()).thenThrows(t, 'not_found');
  customers.given([created]).when(submit({ merchantId: OTHER_MERCHANT })).thenThrows(t, 'not_found');
});

t.test('at least one document, at most ten', async (t) => {
  t.same(badRequest(t, [created], submit({ documents: [] })), ['documents']);
  const eleven = Array.from({ length: 11 }, (_, i) => ({ ...passport, documentId: `55555555-5555-4555-8555-5555555555${String(i).padStart(2, '0')}` }));
  t.same(badRequest(t, [created], submit({ documents: eleven })), ['documents']);
});

t.test('each document needs at least one file URL, named by its index', async (t) => {
  const { front_file_url: _, ...noFile } = passport;
  t.same(badRequest(t, [created], submit({ documents: [{ ...passport, documentId: DOC1 }, { ...noFile, documentId: DOC2 }] })), ['documents.1']);
  const selfieOnly = { ...noFile, selfie_file_url: 'https://files.example/selfie.jpg' };
  t.equal(decided([created], submit({ documents: [{ ...selfieOnly, documentId: DOC1 }] })).length, 1, 'a selfie alone is enough');
});

t.test('issue_country_code is two capital letters', async (t) => {
  for (const code of ['S', 'SEN', 'sn', '1A']) {
    t.same(badRequest(t, [created], submit({ documents: [{ ...passport, issue_country_code: code, documentId: DOC1 }] })), ['documents.0.issue_country_code'], code);
  }
});

t.test('dates are real YYYY-MM-DD dates', async (t) => {
  for (const bad of ['2020-02-30', '2020-1-15', '15/01/2020', '2020-01-15T00:00:00Z']) {
    t.same(badRequest(t, [created], submit({ documents: [{ ...passport, issue_date: bad, documentId: DOC1 }] })), ['documents.0.issue_date'], bad);
    t.same(badRequest(t, [created], submit({ documents: [{ ...passport, expiry_date: bad, documentId: DOC1 }] })), ['documents.0.expiry_date'], bad);
  }
});

t.test('an expiry date in the past is refused; today (anywhere on Earth) is still valid', async (t) => {
  const doc = (expiry_date: string) => [{ ...passport, expiry_date, documentId: DOC1 }];
  t.same(badRequest(t, [created], submit({ documents: doc('2026-05-30') })), ['documents.0.expiry_date'], 'yesterday everywhere');
  t.equal(decided([created], submit({ documents: doc('2026-06-01') })).length, 1, 'today');
  // At 2026-06-01T10:00Z it is still 2026-05-31 in UTC-12 until 12:00Z.
  t.equal(decided([created], submit({ documents: doc('2026-05-31') })).length, 1, 'still today in UTC-12');
  t.same(badRequest(t, [created], submit({ documents: doc('2026-05-31'), at: '2026-06-01T12:00:00.000Z' })), ['documents.0.expiry_date'], 'past everywhere at noon UTC');
});

t.test('an issue date in the future is refused; expiry must follow issue', async (t) => {
  const doc = (issue_date: string, expiry_date = '2031-01-01') => [{ ...passport, issue_date, expiry_date, documentId: DOC1 }];
  t.same(badRequest(t, [created], submit({ documents: doc('2026-06-03') })), ['documents.0.issue_date'], 'the day after tomorrow');
  t.equal(decided([created], submit({ documents: doc('2026-06-02') })).length, 1, 'already tomorrow in UTC+14');
  t.same(badRequest(t, [created], submit({ documents: doc('1899-12-31') })), ['documents.0.issue_date']);
  t.same(badRequest(t, [created], submit({ documents: doc('2027-01-01', '2027-01-01') })), ['documents.0.issue_date'], 'a future issue date is the one problem named');
  t.same(badRequest(t, [created], submit({ documents: doc('2026-01-01', '2026-01-01') })), ['documents.0.expiry_date'], 'expiry equal to issue');
});

t.test('every problem of every document is listed', async (t) => {
  const fields = badRequest(t, [created], submit({
    documents: [
      { ...passport, expiry_date: '2020-01-01', issue_country_code: 'sn', documentId: DOC1 },
      { document_type: 'national_id', document_number: ' ', issue_country_code: 'SN', issue_date: '2099-01-01', documentId: DOC2 },
    ],
  }));
  t.same(fields.sort(), ['documents.0.expiry_date', 'documents.0.issue_country_code', 'documents.1', 'documents.1.document_number', 'documents.1.issue_date'].sort());
});

t.test('file URLs refused by the address check (made before deciding) refuse the submission, after the documents\' problems', async (t) => {
  const refusedUrls = [{ field: 'documents.0.front_file_url', message: 'refused: the address is private' }];
  t.same(badRequest(t, [created], submit({ refusedUrls })), ['documents.0.front_file_url'], 'alone');
  const e = customers.given([created]).when(submit({ documents: [{ ...passport, issue_country_code: 'sn', documentId: DOC1 }], refusedUrls }))
    .thenThrows(t, 'bad_request');
  t.same(e?.details, [{ field: 'documents.0.issue_country_code', message: 'must be a 2-letter country code' }, ...refusedUrls], 'one answer lists every problem');
  t.equal(e?.message, 'The KYC submission is invalid');
  customers.given([created, submitted()]).when(submit({ submissionId: SUB2, refusedUrls })).thenThrows(t, 'kyc_review_pending', 'a pending review is the answer');
  customers.given([]).when(submit({ refusedUrls })).thenThrows(t, 'not_found', 'no customer is the answer');
});

t.test('another merchant\'s customer is no customer: refused before any URL is checked', async (t) => {
  t.doesNotThrow(() => requireOwnCustomer(given([created]), MERCHANT));
  for (const [history, merchantId] of [[[created], OTHER_MERCHANT], [[], MERCHANT]] as const) {
    try {
      requireOwnCustomer(given([...history]), merchantId);
      t.fail('expected not_found');
    } catch (err) {
      t.ok(err instanceof DomainError, 'a DomainError');
      t.equal((err as DomainError).code, 'not_found');
    }
  }
});

t.test('resubmission: refused while pending (409 kyc_review_pending) and once verified (kyc_already_verified); after rejected, a new review', async (t) => {
  customers.given([created, submitted()]).when(submit({ submissionId: SUB2 })).thenThrows(t, 'kyc_review_pending');
  customers.given([created, submitted(), checked(DOC1, [fetched('front_file_url')]), reviewed('verified')])
    .when(submit({ submissionId: SUB2 })).thenThrows(t, 'kyc_already_verified');
  const history = [created, submitted(), checked(DOC1, [failed('front_file_url')]), reviewed('rejected')];
  customers.given(history).when(submit({ submissionId: SUB2, documents: [{ ...nationalId, documentId: DOC2 }], at: LATER }))
    .then(t, [submitted(SUB2, [{ ...nationalId, document_id: DOC2 }], LATER)]);
  const s = given([...history, submitted(SUB2, [{ ...nationalId, document_id: DOC2 }], LATER)]);
  t.equal(s.kycStatus, 'pending', 'a new review');
  t.equal(s.kyc.submissions, 2);
  t.same(s.kyc.current?.documents.map((d) => [d.id, d.status]), [[DOC2, 'uploaded']], 'the latest submission\'s documents');
});

t.test('review steps: documents are checked one by one, each once; the verdict comes when none is left', async (t) => {
  const two = submitted(SUB1, [{ ...passport, document_id: DOC1 }, { ...nationalId, document_id: DOC2 }]);
  let s = given([created, two]);
  t.equal(nextDocumentToCheck(s, SUB1)?.id, DOC1);
  t.same(filesOf(nextDocumentToCheck(s, SUB1)!).map((f) => f.field), ['front_file_url']);
  customers.given([created, two]).when(check(DOC1, [fetched('front_file_url')]))
    .then(t, [checked(DOC1, [fetched('front_file_url')])]);
  const oneChecked = [created, two, checked(DOC1, [fetched('front_file_url')])];
  s = given(oneChecked);
  t.equal(nextDocumentToCheck(s, SUB1)?.id, DOC2);
  customers.given(oneChecked).when(check(DOC1, [failed('front_file_url')])).thenNothing(t, 'a re-run records nothing');
  t.equal(s.kycStatus, 'pending', 'a check alone does not change the status');
  customers.given(oneChecked).when(complete()).thenThrows(t, InvariantViolation, 'no verdict before every document is checked');
  customers.given(oneChecked).when(check(DOC2, [fetched('front_file_url')])).thenThrows(t, InvariantViolation, 'a check covers exactly the document\'s files');
  customers.given(oneChecked).when(check(DOC3, [])).thenThrows(t, InvariantViolation, 'an unknown document');
  customers.given(oneChecked).when(check(DOC2, [], SUB2)).thenNothing(t, 'another submission: nothing');
});

t.test('verdict: verified when every file of every document was fetched', async (t) => {
  customers.given([created, submitted(), checked(DOC1, [fetched('front_file_url')])])
    .when(complete())
    .then(t, [reviewed('verified')]);
  const verified = [created, submitted(), checked(DOC1, [fetched('front_file_url')]), reviewed('verified')];
  const s = given(verified);
  t.equal(s.kycStatus, 'verified');
  t.equal(s.updatedAt, LATER);
  t.match(s.kyc.current?.documents, [{ id: DOC1, status: 'verified', rejection_reason: null }]);
  t.equal(nextDocumentToCheck(s, SUB1), undefined);
  customers.given(verified).when(complete()).thenNothing(t, 'decided once');
});

t.test('verdict: a document with any failed file is rejected with the reasons; the KYC is rejected unless every document is verified', async (t) => {
  const two = submitted(SUB1, [{ ...passport, document_id: DOC1 }, { ...nationalId, document_id: DOC2 }]);
  customers.given([
    created, two, checked(DOC1, [fetched('front_file_url')]),
    checked(DOC2, [fetched('front_file_url'), failed('back_file_url', 'not an image or a PDF (detected application/zip)')]),
  ]).when(complete()).then(t, [{
    type: 'customer.kyc_reviewed',
    data: {
      customer_id: CUSTOMER, submission_id: SUB1, kyc_status: 'rejected', at: LATER,
      documents: [
        { document_id: DOC1, status: 'verified', rejection_reason: null },
        { document_id: DOC2, status: 'rejected', rejection_reason: 'back_file_url: not an image or a PDF (detected application/zip)' },
      ],
    },
  }]);
  t.same(documentVerdict([failed('front_file_url', 'a'), failed('selfie_file_url', 'b')]), { status: 'rejected', rejection_reason: 'front_file_url: a; selfie_file_url: b' });
  t.same(documentVerdict([]), { status: 'rejected', rejection_reason: 'no file to review' });
});

t.test('a verdict for an earlier submission changes nothing (a late worker after a resubmission)', async (t) => {
  const history = [created, submitted(), checked(DOC1, [failed('front_file_url')]), reviewed('rejected'), submitted(SUB2, [{ ...nationalId, document_id: DOC2 }], LATER)];
  customers.given(history).when(complete(SUB1)).thenNothing(t);
  const s = given([...history, reviewed('verified', SUB1)]);
  t.equal(s.kycStatus, 'pending', 'evolve ignores a verdict for another submission');
});

t.test('KYC gate: an operator requiring KYC needs verified; others need nothing', async (t) => {
  const gate = (kycStatus: CustomerState['kycStatus'], operatorCode = 'SN_WAVE_MOMO') => () =>
    requireKycFor({ kycRequiredOperators: ['SN_WAVE_MOMO'], operatorCode, kycStatus });
  for (const status of ['not_started', 'pending', 'rejected'] as const) {
    try {
      gate(status)();
      t.fail(`${status} should be refused`);
    } catch (err) {
      t.equal((err as DomainError).code, 'kyc_required', status);
      t.equal((err as DomainError).details?.[0]?.field, 'customer_id');
    }
  }
  t.doesNotThrow(gate('verified'));
  t.doesNotThrow(gate('not_started', 'CM_MTN_MOMO'), 'an operator that does not require KYC');
});
