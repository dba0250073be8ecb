// Read model of KYC: what GET /customers/{id}/kyc reads. `kyc_records` holds each customer's latest
// submission and status; `kyc_documents` every document ever submitted (earlier submissions stay,
// the record points at the latest). The customer record's `kyc_status` is the customers projection's.
import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { CustomerEvent } from '../domain/customer.ts';
import { unreachable } from '../domain/decider.ts';
import type { Projection } from './projection.ts';

const PREFIX = 'customer-';

async function applyOne(tx: Knex.Transaction, r: RecordedEvent): Promise<void> {
  const e = { type: r.type, data: r.data } as CustomerEvent;
  switch (e.type) {
    case 'customer.created':
    case 'customer.kyc_document_checked':
      return;
    case 'customer.kyc_submitted': {
      const d = e.data;
      if (d.documents.length > 0) {
        await tx('kyc_documents').insert(d.documents.map((doc, seq) => ({
          id: doc.document_id,
          customer_id: d.customer_id,
          merchant_id: d.merchant_id,
          submission_id: d.submission_id,
          seq,
          document_type: doc.document_type,
          document_number: doc.document_number,
          issue_country_code: doc.issue_country_code,
          issue_date: doc.issue_date ?? null,
          expiry_date: doc.expiry_date ?? null,
          front_file_url: doc.front_file_url ?? null,
          back_file_url: doc.back_file_url ?? null,
          selfie_file_url: doc.selfie_file_url ?? null,
          status: 'uploaded',
          rejection_reason: null,
          created_at: d.at,
          reviewed_at: null,
        }))).onConflict('id').ignore();
      }
      await tx.raw(
        `INSERT INTO kyc_records (customer_id, merchant_id, kyc_status, submission_id, submissions, submitted_at, reviewed_at, updated_at)
         VALUES (?, ?, 'pending', ?, 1, ?, NULL, ?)
         ON CONFLICT (customer_id) DO UPDATE SET kyc_status = 'pending', submission_id = excluded.submission_id,
           submissions = kyc_records.submissions + 1, submitted_at = excluded.submitted_at, reviewed_at = NULL,
           updated_at = excluded.updated_at
         WHERE kyc_records.submission_id <> excluded.submission_id`,
        [d.customer_id, d.merchant_id, d.submission_id, d.at, d.at],
      );
      return;
    }
    case 'customer.kyc_reviewed': {
      const d = e.data;
      for (const doc of d.documents) {
        await tx('kyc_documents').where({ id: doc.document_id, submission_id: d.submission_id })
          .update({ status: doc.status, rejection_reason: doc.rejection_reason, reviewed_at: d.at });
      }
      await tx('kyc_records').where({ customer_id: d.customer_id, submission_id: d.submission_id })
        .update({ kyc_status: d.kyc_status, reviewed_at: d.at, updated_at: d.at });
      return;
    }
    default:
      unreachable(e);
  }
}

export const kycProjection: Projection = {
  name: 'kyc',
  tables: ['kyc_records', 'kyc_documents'],
  async apply(tx, events) {
    for (const e of events) if (e.streamId.startsWith(PREFIX)) await applyOne(tx, e);
  },
};
