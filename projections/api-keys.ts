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
  /** What the key may do (CONTRACT §18): ["*"] or `<resource>:read|write` entries. */
  scopes: string[];
}

/** Several keys' rows in one query (an open event stream's credential, checked again while it is open). */
export async function readKeyRows(knex: Knex, apiKeys: string[]): Promise<Map<string, KeyRow>> {
  const r = await knex.raw<{ rows: Array<KeyRow & { api_key: string }> }>(
    `SELECT k.api_key, k.merchant_id, k.secret_hash, k.previous_secret_hash, k.previous_valid_until, k.status, k.expires_at, k.scopes,
            m.status AS merchant_status
     FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.api_key = ANY(?::text[])`,
    [apiKeys],
  );
  return new Map(r.rows.map((row) => [row.api_key, row]));
}

export async function readKeyRow(knex: Knex, apiKey: string): Promise<KeyRow | undefined> {
  const r = await knex.raw<{ rows: KeyRow[] }>(
    `SELECT k.merchant_id, k.secret_hash, k.previous_secret_hash, k.previous_valid_until, k.status, k.expires_at, k.scopes,
            m.status AS merchant_status
     FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.api_key = ?`,
    [apiKey],
  );
  return r.rows[0];
}
