// Read models of merchants and their API keys (what authentication and the operator API read).
import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { MerchantEvent } from '../domain/merchant.ts';
import type { Projection } from './projection.ts';

const idOf = (streamId: string) => streamId.slice('merchant-'.length);

async function applyOne(tx: Knex.Transaction, r: RecordedEvent): Promise<void> {
  const e = { type: r.type, data: r.data } as MerchantEvent;
  const merchantId = idOf(r.streamId);
  switch (e.type) {
    case 'merchant.created':
      await tx('merchants').insert({
        id: merchantId, name: e.data.name, status: 'active', routing: JSON.stringify(e.data.routing),
        pricing: JSON.stringify(e.data.pricing), created_at: e.data.at, updated_at: e.data.at,
      }).onConflict('id').ignore();
      return;
    case 'merchant.status_changed':
      await tx('merchants').where({ id: merchantId }).update({ status: e.data.status, updated_at: e.data.at });
      return;
    case 'merchant.routing_set':
      await tx('merchants').where({ id: merchantId }).update({ routing: JSON.stringify(e.data.routing), updated_at: e.data.at });
      return;
    case 'merchant.corridor_added':
    case 'merchant.corridor_removed':
      await tx('merchants').where({ id: merchantId }).update({
        routing: tx.raw(`jsonb_set(routing, '{corridors}', ?::jsonb)`, [JSON.stringify(e.data.corridors)]), updated_at: e.data.at,
      });
      return;
    case 'merchant.pricing_set':
      await tx('merchants').where({ id: merchantId }).update({ pricing: JSON.stringify(e.data.pricing), updated_at: e.data.at });
      return;
    case 'merchant.webhook_configured':
      await tx('merchants').where({ id: merchantId }).update({
        webhook_url: e.data.url, webhook_secret_sealed: e.data.signing_secret_sealed, updated_at: e.data.at,
      });
      return;
    case 'merchant.api_key_created':
      await tx('api_keys').insert({
        id: e.data.key_id, merchant_id: merchantId, api_key: e.data.api_key, secret_hash: e.data.secret_hash,
        status: 'active', expires_at: e.data.expires_at, created_at: e.data.at, updated_at: e.data.at,
        // A key created before scopes existed may do everything (domain/api-key-scopes.ts).
        scopes: JSON.stringify(e.data.scopes ?? ['*']),
      }).onConflict('id').ignore();
      return;
    case 'merchant.api_key_rotated':
      await tx('api_keys').where({ id: e.data.key_id }).update({
        secret_hash: e.data.secret_hash, previous_secret_hash: e.data.previous_secret_hash,
        previous_valid_until: e.data.previous_valid_until, updated_at: e.data.at,
      });
      return;
    case 'merchant.api_key_revoked':
      await tx('api_keys').where({ id: e.data.key_id }).update({ status: 'revoked', updated_at: e.data.at });
      return;
  }
}

export const merchantsProjection: Projection = {
  name: 'merchants',
  tables: ['merchants', 'api_keys'],
  async apply(tx, events) {
    for (const e of events) if (e.streamId.startsWith('merchant-')) await applyOne(tx, e);
  },
};
