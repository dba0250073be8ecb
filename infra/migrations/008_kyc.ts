import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Read model of KYC (projections/kyc.ts): per customer, the latest submission and its status; per
// document, what was submitted and its review. Documents of earlier submissions stay (history).
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE kyc_records (
      customer_id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      kyc_status text NOT NULL,
      submission_id uuid NOT NULL,
      submissions integer NOT NULL,
      submitted_at timestamptz NOT NULL,
      reviewed_at timestamptz,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE TABLE kyc_documents (
      id uuid PRIMARY KEY,
      customer_id uuid NOT NULL,
      merchant_id uuid NOT NULL,
      submission_id uuid NOT NULL,
      seq integer NOT NULL,
      document_type text NOT NULL,
      document_number text NOT NULL,
      issue_country_code text NOT NULL,
      issue_date text,
      expiry_date text,
      front_file_url text,
      back_file_url text,
      selfie_file_url text,
      status text NOT NULL,
      rejection_reason text,
      created_at timestamptz NOT NULL,
      reviewed_at timestamptz
    )`,
    // GET /customers/{id}/kyc: the documents of one submission, in the order sent.
    `CREATE INDEX kyc_documents_submission ON kyc_documents (submission_id, seq)`,
    `CREATE INDEX kyc_documents_customer ON kyc_documents (customer_id)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE kyc_documents', 'DROP TABLE kyc_records']);
}
