// KYC commands on the customer stream (domain/kyc.ts): the merchant's submission and the review
// worker's steps (workers/kyc-review.ts). Payouts and transfers decide the KYC gate themselves
// (domain/kyc.ts requireKycFor).
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import * as C from '../domain/customer.ts';
import * as K from '../domain/kyc.ts';
import type { ErrorDetail } from '../domain/errors.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { checkUrl, UnsafeUrlError, type UrlPolicy } from '../infra/url-safety.ts';
import { streams } from './streams.ts';

/**
 * Where KYC files may be fetched from (CONTRACT.md §1): https to public addresses, or, with
 * ALLOW_PRIVATE_URLS, http(s) anywhere (local testing).
 */
export function kycUrlPolicy(s: Services): UrlPolicy {
  return { allowPrivate: s.config.allowPrivateUrls, schemes: ['https:'], resolver: s.resolver };
}

/** A submission's host names are resolved in parallel; one that takes longer is refused. */
const URL_CHECK_TIMEOUT_MS = 5_000;

/**
 * Each file URL checked before anything is recorded (the configuration-time check; the worker checks
 * again at connect time). One detail per refused URL, naming its field.
 */
async function urlProblems(s: Services, documents: K.KycDocumentInput[]): Promise<ErrorDetail[]> {
  const policy = kycUrlPolicy(s);
  const checks = documents.flatMap((d, i) => K.filesOf(d).map(async ({ field, url }) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        checkUrl(url, policy),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new UnsafeUrlError('the host name did not resolve in time')), URL_CHECK_TIMEOUT_MS);
        }),
      ]);
      return undefined;
    } catch (err) {
      if (err instanceof UnsafeUrlError) return { field: `documents.${i}.${field}`, message: `refused: ${err.message}` };
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }));
  return (await Promise.all(checks)).filter((d): d is ErrorDetail => d !== undefined);
}

/**
 * Submits the documents: customer.kyc_submitted (kyc_status → pending). The review worker picks it
 * up from the bus. Answers the customer with its new KYC state.
 */
export async function submitKyc(
  s: Services,
  c: { customerId: string; merchantId: string; documents: K.KycDocumentInput[] },
  meta: EventMetadata,
): Promise<C.CustomerState> {
  const streamId = streams.customer(c.customerId);
  const first = await s.aggregates.load(streamId, C.customerDecider);
  K.requireOwnCustomer(first.state, c.merchantId); // before any DNS work
  const command: C.CustomerCommand = {
    type: 'SubmitKyc',
    data: {
      merchantId: c.merchantId,
      submissionId: randomUUID(),
      documents: c.documents.map((d) => ({ ...d, documentId: randomUUID() })),
      refusedUrls: await urlProblems(s, c.documents),
      at: s.clock.now().toISOString(),
    },
  };
  const { state, append } = await s.aggregates.execute(streamId, C.customerDecider, command, meta);
  await s.awaitReadModels(append?.position);
  return state;
}

/** A review step on the customer stream (the worker does not wait for the read models); answers the state after it. */
async function onCustomer(s: Services, customerId: string, command: (at: string) => K.KycCommand, meta: EventMetadata): Promise<C.CustomerState> {
  const build = (): C.CustomerCommand => command(s.clock.now().toISOString()); // the time of each attempt
  return (await s.aggregates.execute(streams.customer(customerId), C.customerDecider, build, meta)).state;
}

/** Review step: the fetch outcome of one document's files (recorded once). */
export function recordKycDocumentCheck(
  s: Services, customerId: string, submissionId: string, documentId: string, files: K.FileCheck[], meta: EventMetadata,
): Promise<C.CustomerState> {
  return onCustomer(s, customerId, (at) => ({ type: 'RecordKycDocumentCheck', data: { submissionId, documentId, files, at } }), meta);
}

/** Review step: the verdict once every document is checked (decided once). */
export function completeKycReview(s: Services, customerId: string, submissionId: string, meta: EventMetadata): Promise<C.CustomerState> {
  return onCustomer(s, customerId, (at) => ({ type: 'CompleteKycReview', data: { submissionId, at } }), meta);
}
