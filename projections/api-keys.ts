// An API key as the read models have it (api_keys joined with its merchant's status): what the
// API's authentication checks on every merchant request (api/auth.ts, behind a cache the projector
// clears on merchant events).
import type { Knex } from 'knex';

export interface KeyRow {
  merchant_id: string;
  secret_hash: string;
  previous_secret_hash: string | null;
  previous_valid_until: Date | string | null;
  status: string;
  expires_at: Date | string | null;
  merchant_status: string;
}

export async function readKeyRow(knex: Knex, apiKey: string): Promise<KeyRow | undefined> {
  const r = await knex.raw<{ rows: KeyRow[] }>(
    `SELECT k.merchant_id, k.secret_hash, k.previous_secret_hash, k.previous_valid_until, k.status, k.expires_at,
            m.status AS merchant_status
     FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.api_key = ?`,
    [apiKey],
  );
  return r.rows[0];
}
