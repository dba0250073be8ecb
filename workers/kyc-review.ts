// The KYC review (CONTRACT.md §5): fetch every file of a submission, then the sandbox verdict.
//
//   bus `events.customer.kyc_submitted` ──► durable job `kyc-review` (key = customer:submission)
//   job run ──► next unchecked document? ──► fetch its files (safe-fetch) ──► customer.kyc_document_checked
//          │                                   then run again at once for the next document
//          └─► none left ──► customer.kyc_reviewed (verified | rejected, per document and overall)
//
// At least once everywhere, so every step is idempotent: scheduling is keyed by submission, a
// document's check and the verdict are recorded once by the domain (a re-run decides nothing), and
// a run that dies mid-fetch is taken over when its lease expires and fetches that document again.
// A run handles one document, so its lease only has to cover three fetches.
//
// Each file: safe-fetch (http(s) only, address checked at connect time, redirects re-checked, a
// deadline, 10 MiB cap while streaming), then its type sniffed from its first bytes with file-type:
// an image or a PDF. One attempt per file: a file that cannot be fetched rejects its document with
// the reason, and the merchant may submit again. Nothing of the file is kept but its type, size and
// SHA-256. Logs name the customer, the document and the outcome, never the URL (it may be signed).
import { fileTypeFromBuffer } from 'file-type';
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { Job, JobOutcome } from '../infra/scheduler.ts';
import { fetchLimited, type FetchLimits } from '../infra/safe-fetch.ts';
import * as C from '../domain/customer.ts';
import * as K from '../domain/kyc.ts';
import { completeKycReview, kycUrlPolicy, recordKycDocumentCheck } from '../commands/kyc.ts';
import { streams } from '../commands/streams.ts';
import { subjectOf, type ForwardedEvent } from '../infra/bus/forwarded-event.ts';

export const KYC_REVIEWER = 'kyc-review';
export const KYC_REVIEW_JOB = 'kyc-review';

/** CONTRACT.md §5: the size cap of one file. */
export const MAX_KYC_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_KYC_REDIRECTS = 5;
/** Enough of the start of a file for file-type to recognise images and PDF. */
const SNIFF_BYTES = 4100;
const JOB_CONCURRENCY = 4;

/** What a file must be, as sniffed from its bytes (never from its name or Content-Type). */
export const ACCEPTED_TYPES: ReadonlySet<string> = new Set([
  'image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/heic', 'image/heif', 'image/avif',
  'image/tiff', 'image/bmp', 'image/jp2', 'application/pdf',
]);

export interface ReviewJob {
  customer_id: string;
  submission_id: string;
}

export const reviewKey = (p: ReviewJob) => `${p.customer_id}:${p.submission_id}`;

export function fetchLimits(s: Services): FetchLimits {
  return { timeoutMs: s.config.kycFetchTimeoutMs, maxBytes: MAX_KYC_FILE_BYTES, maxRedirects: MAX_KYC_REDIRECTS, headBytes: SNIFF_BYTES };
}

/** Fetches one file and judges its type. */
export async function checkFile(s: Services, field: K.KycFileField, url: string): Promise<K.FileCheck> {
  const r = await fetchLimited(url, kycUrlPolicy(s), fetchLimits(s));
  if (!r.ok) return { field, outcome: 'failed', failure: r.code, message: r.message };
  if (r.sizeBytes === 0) return { field, outcome: 'failed', failure: 'empty', message: 'the file is empty' };
  const type = await fileTypeFromBuffer(r.head);
  if (!type || !ACCEPTED_TYPES.has(type.mime)) {
    return { field, outcome: 'failed', failure: 'unsupported_type', message: `not an image or a PDF (${type ? `detected ${type.mime}` : 'type not recognised'})` };
  }
  return { field, outcome: 'fetched', content_type: type.mime, size_bytes: r.sizeBytes, sha256: r.sha256 };
}

/** One run of a review: check the next document, or decide the verdict when none is left. */
export async function reviewStep(s: Services, job: ReviewJob): Promise<JobOutcome> {
  const meta: EventMetadata = { actor: KYC_REVIEWER, causationId: `${KYC_REVIEW_JOB}:${reviewKey(job)}`, correlationId: streams.customer(job.customer_id) };
  const { state } = await s.aggregates.load(streams.customer(job.customer_id), C.customerDecider);
  if (!state.exists) {
    s.log.warn({ customer_id: job.customer_id }, 'kyc review for an unknown customer; dropped');
    return;
  }
  const doc = K.nextDocumentToCheck(state, job.submission_id);
  if (doc) {
    const files: K.FileCheck[] = [];
    for (const { field, url } of K.filesOf(doc)) {
      const check = await checkFile(s, field, url);
      s.log.info({
        customer_id: job.customer_id, submission_id: job.submission_id, document_id: doc.id, field, outcome: check.outcome,
        ...(check.outcome === 'failed' ? { failure: check.failure } : { content_type: check.content_type, size_bytes: check.size_bytes }),
      }, 'kyc file checked');
      files.push(check);
    }
    await recordKycDocumentCheck(s, job.customer_id, job.submission_id, doc.id, files, meta);
    return { retryAt: s.clock.now() }; // the next document (or the verdict) in a run of its own
  }
  const after = await completeKycReview(s, job.customer_id, job.submission_id, meta);
  if (after.kyc.current?.id === job.submission_id) {
    s.log.info({ customer_id: job.customer_id, submission_id: job.submission_id, kyc_status: after.kycStatus }, 'kyc reviewed');
  }
}

export const kycReviewWorker: Worker = {
  name: KYC_REVIEWER,
  consumes: () => ['customer.kyc_submitted'],
  async start(s: Services) {
    s.scheduler.register(KYC_REVIEW_JOB, (job: Job) => reviewStep(s, job.payload as ReviewJob), {
      concurrency: JOB_CONCURRENCY,
      // One run fetches at most one document's files, each within the fetch time-out.
      leaseMs: K.KYC_FILE_FIELDS.length * s.config.kycFetchTimeoutMs + s.config.jobLeaseMs,
      errorBackoffMs: (n) => Math.min(60_000, 1000 * 2 ** Math.min(n, 6)),
    });
    const consumer = await s.bus.consume({
      durable: KYC_REVIEWER,
      subjects: kycReviewWorker.consumes!().map(subjectOf),
      concurrency: 8,
      handler: async (msg) => {
        const e = msg.data as ForwardedEvent;
        const data = e.data as { customer_id: string; submission_id: string };
        const payload: ReviewJob = { customer_id: data.customer_id, submission_id: data.submission_id };
        await s.scheduler.schedule(KYC_REVIEW_JOB, reviewKey(payload), payload, s.clock.now());
      },
    });
    return async () => {
      await consumer.stop();
    };
  },
};
