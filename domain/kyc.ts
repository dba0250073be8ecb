// KYC (CONTRACT.md §5): identity documents submitted for a customer, on the customer's own stream
// (`customer-<id>`), so the customer and its reviews share one history and one version.
//
//   not_started ──submit──► pending ──(every file checked)──► verified | rejected
//                              ▲                                            │
//                              └──────────── submit again (a new review) ◄──┘
//
// While a review is pending, or once the customer is verified, a new submission is refused (409):
// a pending review ends by itself within seconds, and a verified customer stays verified (no
// re-verification flow yet). Every submission, file check and verdict stays on the stream.
//
// The review: the worker records one `customer.kyc_document_checked` per document (the outcome of
// fetching each of its files), then `customer.kyc_reviewed`, decided here from those checks alone:
// a document is verified when every one of its files was fetched and is an image or a PDF; else it
// is rejected with a `rejection_reason` naming each failed file. The KYC is verified when every
// document is. Pure: ids and time arrive in the command.
import { unreachable, type DomainEvent } from './decider.ts';
import { DomainError, invariant, type ErrorDetail } from './errors.ts';
import { earliestDateAt, isCalendarDate, latestDateAt } from './dates.ts';

/** The KYC lifecycle (CONTRACT.md §5): not_started → pending on submission → verified | rejected. */
export const KYC_STATUSES = ['not_started', 'pending', 'verified', 'rejected'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

/** What the KYC decisions read of the customer whose KYC it is (a CustomerState is one). */
export interface KycHolder {
  exists: boolean;
  id: string;
  merchantId: string;
  kyc: KycState;
}

export const KYC_DOCUMENT_TYPES = [
  'national_id', 'passport', 'drivers_license', 'residence_permit', 'voter_id',
] as const;
export type KycDocumentType = (typeof KYC_DOCUMENT_TYPES)[number];

export const KYC_FILE_FIELDS = ['front_file_url', 'back_file_url', 'selfie_file_url'] as const;
export type KycFileField = (typeof KYC_FILE_FIELDS)[number];

export const KYC_DOCUMENT_STATUSES = ['uploaded', 'verified', 'rejected'] as const;
export type KycDocumentStatus = (typeof KYC_DOCUMENT_STATUSES)[number];

/** Documents in one submission (the seed gives no maximum; every file is fetched, so bound it). */
export const MAX_KYC_DOCUMENTS = 10;
const OLDEST_DOCUMENT_DATE = '1900-01-01';

/** A document as the merchant sends it. */
export interface KycDocumentInput {
  document_type: KycDocumentType;
  document_number: string;
  issue_country_code: string;
  /** YYYY-MM-DD */
  issue_date?: string;
  /** YYYY-MM-DD */
  expiry_date?: string;
  front_file_url?: string;
  back_file_url?: string;
  selfie_file_url?: string;
}

/** A submitted document and where its review stands. */
export interface KycDocument extends KycDocumentInput {
  id: string;
  status: KycDocumentStatus;
  rejection_reason: string | null;
  created_at: string;
}

/** Why a file could not be used. */
export const FILE_FAILURES = [
  'unsafe_url', 'http_error', 'too_many_redirects', 'too_large', 'timeout', 'network_error', 'empty', 'unsupported_type',
] as const;
export type FileFailure = (typeof FILE_FAILURES)[number];

/** The outcome of fetching one file of a document. */
export type FileCheck =
  | { field: KycFileField; outcome: 'fetched'; content_type: string; size_bytes: number; sha256: string }
  | { field: KycFileField; outcome: 'failed'; failure: FileFailure; message: string };

export type KycEvent =
  | DomainEvent<'customer.kyc_submitted', {
    customer_id: string;
    merchant_id: string;
    submission_id: string;
    documents: Array<KycDocumentInput & { document_id: string }>;
    at: string;
  }>
  | DomainEvent<'customer.kyc_document_checked', {
    customer_id: string;
    submission_id: string;
    document_id: string;
    files: FileCheck[];
    at: string;
  }>
  | DomainEvent<'customer.kyc_reviewed', {
    customer_id: string;
    submission_id: string;
    kyc_status: 'verified' | 'rejected';
    documents: Array<{ document_id: string; status: 'verified' | 'rejected'; rejection_reason: string | null }>;
    at: string;
  }>;

export interface KycSubmission {
  id: string;
  submittedAt: string;
  documents: KycDocument[];
  /** File checks recorded so far, by document id. */
  checks: Record<string, FileCheck[]>;
  reviewedAt: string | null;
}

export interface KycState {
  status: KycStatus;
  /** The latest submission (earlier ones are on the stream). */
  current: KycSubmission | null;
  /** Submissions so far. */
  submissions: number;
}

export const initialKycState = (): KycState => ({ status: 'not_started', current: null, submissions: 0 });

export function evolveKyc(s: KycState, e: KycEvent): KycState {
  switch (e.type) {
    case 'customer.kyc_submitted':
      return {
        status: 'pending',
        submissions: s.submissions + 1,
        current: {
          id: e.data.submission_id,
          submittedAt: e.data.at,
          documents: e.data.documents.map(({ document_id, ...d }) => ({
            ...d, id: document_id, status: 'uploaded', rejection_reason: null, created_at: e.data.at,
          })),
          checks: {},
          reviewedAt: null,
        },
      };
    case 'customer.kyc_document_checked': {
      const c = s.current;
      if (!c || c.id !== e.data.submission_id) return s;
      return { ...s, current: { ...c, checks: { ...c.checks, [e.data.document_id]: e.data.files } } };
    }
    case 'customer.kyc_reviewed': {
      const c = s.current;
      if (!c || c.id !== e.data.submission_id) return s;
      const verdicts = new Map(e.data.documents.map((d) => [d.document_id, d]));
      return {
        ...s,
        status: e.data.kyc_status,
        current: {
          ...c,
          reviewedAt: e.data.at,
          documents: c.documents.map((d) => {
            const v = verdicts.get(d.id);
            return v ? { ...d, status: v.status, rejection_reason: v.rejection_reason } : d;
          }),
        },
      };
    }
    default:
      return unreachable(e);
  }
}

// ---- decisions (pure; ids, time and the outcome of any I/O arrive in the command) ----

export interface SubmitKyc {
  merchantId: string;
  submissionId: string;
  /** Each document with the id it takes. */
  documents: Array<KycDocumentInput & { documentId: string }>;
  /**
   * The file URLs refused by the address check made before deciding (it resolves host names: I/O),
   * one detail per URL naming its field.
   */
  refusedUrls: ErrorDetail[];
  /** ISO date-time of the request. */
  at: string;
}

interface RecordDocumentCheck {
  submissionId: string;
  documentId: string;
  /** The outcome of fetching each of the document's files (the worker's I/O). */
  files: FileCheck[];
  at: string;
}

interface CompleteReview {
  submissionId: string;
  at: string;
}

/** What may be asked of a customer's KYC, each a plain value. */
export type KycCommand =
  | { type: 'SubmitKyc'; data: SubmitKyc }
  | { type: 'RecordKycDocumentCheck'; data: RecordDocumentCheck }
  | { type: 'CompleteKycReview'; data: CompleteReview };

/** The KYC part of the customer decider (domain/customer.ts hands these commands here). */
export function decideKyc(command: KycCommand, s: KycHolder): KycEvent[] {
  switch (command.type) {
    case 'SubmitKyc':
      return submitKyc(s, command.data);
    case 'RecordKycDocumentCheck':
      return recordDocumentCheck(s, command.data);
    case 'CompleteKycReview':
      return completeReview(s, command.data);
    default:
      return unreachable(command);
  }
}

/**
 * Another merchant's customer gets the same answer as no customer at all. Asked by a submission,
 * and by its handler before the URL checks, so an unknown customer costs no DNS work.
 */
export function requireOwnCustomer(s: KycHolder, merchantId: string): void {
  if (!s.exists || s.merchantId !== merchantId) throw new DomainError('not_found', 'Customer not found');
}

/** The checks that need the command's time (the schema checks the shapes); one detail per problem. */
function documentProblems(d: KycDocumentInput, i: number, at: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const field = (name: string) => `documents.${i}.${name}`;
  if (!KYC_FILE_FIELDS.some((f) => typeof d[f] === 'string' && d[f] !== '')) {
    details.push({ field: `documents.${i}`, message: `must have at least one of ${KYC_FILE_FIELDS.join(', ')}` });
  }
  if (!/^[A-Z]{2}$/.test(d.issue_country_code ?? '')) {
    details.push({ field: field('issue_country_code'), message: 'must be a 2-letter country code' });
  }
  if (typeof d.document_number !== 'string' || d.document_number.trim() === '') {
    details.push({ field: field('document_number'), message: 'is required' });
  }
  details.push(...documentDateProblems(d, i, at));
  return details;
}

/**
 * A document's dates against the clock (the schema checks their shape): one detail per problem.
 * Values of another type than a string are the schema's to report: the API runs this beside a
 * schema error too, so that one answer lists every problem of a submission (issue 31).
 */
function documentDateProblems(d: { issue_date?: unknown; expiry_date?: unknown }, i: number, at: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const field = (name: string) => `documents.${i}.${name}`;
  let issue: string | undefined;
  if (typeof d.issue_date === 'string') {
    if (!isCalendarDate(d.issue_date)) details.push({ field: field('issue_date'), message: 'must be a date written YYYY-MM-DD' });
    else if (d.issue_date > latestDateAt(at)) details.push({ field: field('issue_date'), message: 'must not be in the future' });
    else if (d.issue_date < OLDEST_DOCUMENT_DATE) details.push({ field: field('issue_date'), message: `must not be before ${OLDEST_DOCUMENT_DATE}` });
    else issue = d.issue_date;
  }
  if (typeof d.expiry_date === 'string') {
    if (!isCalendarDate(d.expiry_date)) details.push({ field: field('expiry_date'), message: 'must be a date written YYYY-MM-DD' });
    else if (d.expiry_date < earliestDateAt(at)) details.push({ field: field('expiry_date'), message: 'must not be in the past: the document has expired' });
    else if (issue !== undefined && d.expiry_date <= issue) details.push({ field: field('expiry_date'), message: 'must be after issue_date' });
  }
  return details;
}

/** The dates of every document of a submission body as sent (any shape), against the clock. */
export function submissionDateProblems(documents: unknown, at: string): ErrorDetail[] {
  if (!Array.isArray(documents)) return [];
  return documents.flatMap((d: unknown, i) => (d && typeof d === 'object' ? documentDateProblems(d, i, at) : []));
}

/**
 * A new submission: `customer.kyc_submitted` (kyc_status → pending). Refused while a review is
 * pending (`kyc_review_pending`) and once verified (`kyc_already_verified`); a customer whose KYC
 * was rejected may submit again, which starts a new review. A refused file URL refuses it too
 * (`bad_request`, beside any other problem of the documents).
 */
function submitKyc(s: KycHolder, c: SubmitKyc): KycEvent[] {
  requireOwnCustomer(s, c.merchantId);
  if (s.kyc.status === 'pending') {
    throw new DomainError('kyc_review_pending', 'A KYC review is already in progress for this customer; submit again if it is rejected');
  }
  if (s.kyc.status === 'verified') {
    throw new DomainError('kyc_already_verified', "This customer's KYC is already verified");
  }
  const details: ErrorDetail[] = [];
  if (c.documents.length === 0) details.push({ field: 'documents', message: 'must have at least 1 document' });
  if (c.documents.length > MAX_KYC_DOCUMENTS) details.push({ field: 'documents', message: `must have at most ${MAX_KYC_DOCUMENTS} documents` });
  c.documents.forEach((d, i) => details.push(...documentProblems(d, i, c.at)));
  // One answer lists every problem: the documents' and the refused URLs.
  details.push(...c.refusedUrls);
  if (details.length > 0) throw new DomainError('bad_request', 'The KYC submission is invalid', details);
  return [{
    type: 'customer.kyc_submitted',
    data: {
      customer_id: s.id,
      merchant_id: s.merchantId,
      submission_id: c.submissionId,
      documents: c.documents.map(({ documentId, ...d }) => {
        const doc: KycDocumentInput & { document_id: string } = {
          document_id: documentId, document_type: d.document_type, document_number: d.document_number,
          issue_country_code: d.issue_country_code,
        };
        for (const f of ['issue_date', 'expiry_date', ...KYC_FILE_FIELDS] as const) if (d[f] !== undefined) doc[f] = d[f];
        return doc;
      }),
      at: c.at,
    },
  }];
}

/** The files of a document that were given, in a fixed order. */
export function filesOf(d: KycDocumentInput): Array<{ field: KycFileField; url: string }> {
  return KYC_FILE_FIELDS.flatMap((field) => (d[field] ? [{ field, url: d[field]! }] : []));
}

/** The submission under review if it is `submissionId` and has no verdict yet. */
function openReview(s: KycHolder, submissionId: string): KycSubmission | undefined {
  const c = s.kyc.current;
  return c && c.id === submissionId && c.reviewedAt === null ? c : undefined;
}

/** The next document of the review whose files have not been checked (none: ready for the verdict). */
export function nextDocumentToCheck(s: KycHolder, submissionId: string): KycDocument | undefined {
  const c = openReview(s, submissionId);
  return c?.documents.find((d) => c.checks[d.id] === undefined);
}

/** Records the fetch outcome of a document's files, once (a re-run of the worker decides nothing). */
function recordDocumentCheck(s: KycHolder, c: RecordDocumentCheck): KycEvent[] {
  const review = openReview(s, c.submissionId);
  if (!review || review.checks[c.documentId] !== undefined) return [];
  const doc = review.documents.find((d) => d.id === c.documentId);
  invariant(doc, `document ${c.documentId} is not in KYC submission ${c.submissionId}`);
  const expected = filesOf(doc).map((f) => f.field);
  invariant(
    c.files.length === expected.length && c.files.every((f, i) => f.field === expected[i]),
    `the check of document ${c.documentId} must cover exactly its files ${expected.join(', ')}`,
  );
  return [{
    type: 'customer.kyc_document_checked',
    data: { customer_id: s.id, submission_id: c.submissionId, document_id: c.documentId, files: c.files, at: c.at },
  }];
}

/** The sandbox verdict on one document from its file checks. */
export function documentVerdict(files: FileCheck[]): { status: 'verified' | 'rejected'; rejection_reason: string | null } {
  const failed = files.filter((f): f is Extract<FileCheck, { outcome: 'failed' }> => f.outcome === 'failed');
  if (files.length > 0 && failed.length === 0) return { status: 'verified', rejection_reason: null };
  const reason = failed.length > 0 ? failed.map((f) => `${f.field}: ${f.message}`).join('; ') : 'no file to review';
  return { status: 'rejected', rejection_reason: reason };
}

/**
 * The verdict, once every document has been checked: `customer.kyc_reviewed` with each document's
 * status and kyc_status verified when every document is, else rejected. Nothing when the review was
 * already decided (a re-run) or is no longer the latest submission.
 */
function completeReview(s: KycHolder, c: CompleteReview): KycEvent[] {
  const review = openReview(s, c.submissionId);
  if (!review) return [];
  invariant(review.documents.every((d) => review.checks[d.id] !== undefined), `KYC submission ${c.submissionId} has unchecked documents`);
  const documents = review.documents.map((d) => ({ document_id: d.id, ...documentVerdict(review.checks[d.id]!) }));
  const kyc_status = documents.every((d) => d.status === 'verified') ? 'verified' : 'rejected';
  return [{ type: 'customer.kyc_reviewed', data: { customer_id: s.id, submission_id: c.submissionId, kyc_status, documents, at: c.at } }];
}

/**
 * The operator gate (routing `kyc_required_operators`): a payout or a transfer disbursing through an
 * operator that requires KYC needs the customer's KYC verified, else 400 `kyc_required`.
 */
/**
 * What a payment's KYC gate decides with (routing kyc_required_operators): the merchant's list, and
 * the customer's KYC status, read only when the operator is on the list (null: not read).
 */
export interface KycGate {
  requiredOperators: readonly string[];
  customerStatus: KycStatus | null;
}

/** The gate of one operator: a customer whose KYC is not verified is refused where it is required. */
export function passKycGate(gate: KycGate, operatorCode: string): void {
  if (!gate.requiredOperators.includes(operatorCode)) return;
  invariant(gate.customerStatus !== null, `the KYC gate of ${operatorCode} needs the customer's KYC status`);
  requireKycFor({ kycRequiredOperators: gate.requiredOperators, operatorCode, kycStatus: gate.customerStatus });
}

export function requireKycFor(c: { kycRequiredOperators: readonly string[]; operatorCode: string; kycStatus: KycStatus }): void {
  if (!c.kycRequiredOperators.includes(c.operatorCode) || c.kycStatus === 'verified') return;
  throw new DomainError('kyc_required', `${c.operatorCode} requires the customer's KYC to be verified; it is ${c.kycStatus}`, [
    { field: 'customer_id', message: `KYC must be verified for ${c.operatorCode} (it is ${c.kycStatus})` },
  ]);
}
