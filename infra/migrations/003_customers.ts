import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Read model of the customer aggregate. `kyc_status` is moved by the KYC events of the same stream.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE customers (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      customer_type text NOT NULL,
      first_name text,
      last_name text,
      business_name text,
      id_number text,
      phone text,
      email text,
      country_code text,
      nationality_code text,
      date_of_birth text,
      address_line1 text,
      city text,
      occupation text,
      source_of_funds text,
      external_ref text,
      metadata jsonb,
      kyc_status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    // The list: one merchant's customers, newest first, keyset-paginated on (created_at, id).
    `CREATE INDEX customers_merchant_created ON customers (merchant_id, created_at DESC, id DESC)`,
    `CREATE INDEX customers_merchant_external_ref ON customers (merchant_id, external_ref) WHERE external_ref IS NOT NULL`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE customers']);
}
