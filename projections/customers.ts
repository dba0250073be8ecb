// Read model of customers: one row per customer, what GET /customers and GET /customers/{id} read.
import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { CustomerEvent } from '../domain/customer.ts';
import { unreachable } from '../domain/decider.ts';
import type { Projection } from './projection.ts';

const PREFIX = 'customer-';

async function applyOne(tx: Knex.Transaction, r: RecordedEvent): Promise<void> {
  const e = { type: r.type, data: r.data } as CustomerEvent;
  switch (e.type) {
    case 'customer.created': {
      const p = e.data.profile;
      await tx('customers').insert({
        id: e.data.customer_id,
        merchant_id: e.data.merchant_id,
        customer_type: e.data.customer_type,
        first_name: p.first_name ?? null,
        last_name: p.last_name ?? null,
        business_name: p.business_name ?? null,
        id_number: p.id_number ?? null,
        phone: p.phone ?? null,
        email: p.email ?? null,
        country_code: p.country_code ?? null,
        nationality_code: p.nationality_code ?? null,
        date_of_birth: p.date_of_birth ?? null,
        address_line1: p.address_line1 ?? null,
        city: p.city ?? null,
        occupation: p.occupation ?? null,
        source_of_funds: p.source_of_funds ?? null,
        external_ref: p.external_ref ?? null,
        metadata: p.metadata === undefined ? null : JSON.stringify(p.metadata),
        kyc_status: 'not_started',
        created_at: e.data.at,
        updated_at: e.data.at,
      }).onConflict('id').ignore();
      return;
    }
    // KYC (domain/kyc.ts): the status shows on the customer record; the documents are in the `kyc`
    // read model (projections/kyc.ts). Setting a value is idempotent.
    case 'customer.kyc_submitted':
      await tx('customers').where({ id: e.data.customer_id }).update({ kyc_status: 'pending', updated_at: e.data.at });
      return;
    case 'customer.kyc_reviewed':
      await tx('customers').where({ id: e.data.customer_id }).update({ kyc_status: e.data.kyc_status, updated_at: e.data.at });
      return;
    case 'customer.kyc_document_checked':
      return;
    default:
      unreachable(e);
  }
}

export const customersProjection: Projection = {
  name: 'customers',
  tables: ['customers'],
  async apply(tx, events) {
    for (const e of events) if (e.streamId.startsWith(PREFIX)) await applyOne(tx, e);
  },
};
