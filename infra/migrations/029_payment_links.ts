import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Payment links (CONTRACT §16): the read model of `payment-link-<id>` streams
// (projections/payment-links.ts): filter columns and the stored record (`body`; its status and URLs
// are rendered at read time, projections/views/payment-link.ts). `status` is what the events make it
// (active, inactive, completed); `expired` is computed from `expires_at` when read.
//
// Payins gain `payment_link_id` (a filter of GET /payins and of a link's payments) and their view
// says it (null for a payin of no link). Rows projected before have no `payment_link_id` in their
// body: the money read model is rebuilt online at the next start (workers/due-rebuilds.ts), only
// where payins exist.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE payment_links (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      customer_id uuid,
      status text NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL,
      body jsonb NOT NULL
    )`,
    `CREATE INDEX payment_links_merchant_created ON payment_links (merchant_id, created_at DESC, id DESC)`,
    `ALTER TABLE payins ADD COLUMN payment_link_id uuid`,
    `CREATE INDEX payins_payment_link ON payins (payment_link_id, created_at DESC, id DESC) WHERE payment_link_id IS NOT NULL`,
    `INSERT INTO projection_rebuilds_due (name, reason)
     SELECT 'money', 'payment_link_id on payins'
     WHERE EXISTS (SELECT 1 FROM payins)
     ON CONFLICT (name) DO NOTHING`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `DELETE FROM projection_rebuilds_due WHERE name = 'money' AND reason = 'payment_link_id on payins'`,
    'DROP INDEX payins_payment_link',
    'ALTER TABLE payins DROP COLUMN payment_link_id',
    'DROP TABLE payment_links',
  ]);
}
