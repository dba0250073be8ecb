// Authentication. Merchant calls: X-Api-Key + X-Api-Secret, the secret compared in constant time
// with its keyed hash. Every failure is the same 401 with no hint of which check failed.
// Operator calls: Authorization: Bearer ADMIN_TOKEN.
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../domain/errors.ts';
import type { ApiServices } from './services.ts';
import { readKeyRow, type KeyRow } from '../projections/api-keys.ts';

const UNAUTHORIZED = 'Missing, invalid, expired or inactive API credentials';

/** The credential a merchant request presented: its key and the stored hash of the secret that matched (never the secret). */
export interface MerchantCredential {
  merchantId: string;
  apiKey: string;
  secretHash: string;
  /** What the key may do (CONTRACT §18), checked per operation by middleware/scope.ts. */
  scopes: string[];
}

/**
 * Whether a credential still stands: the key active and unexpired, its merchant active, and the
 * secret it was presented with the key's current one, or its previous one within the grace.
 */
export function credentialStands(row: KeyRow | undefined, secretHash: string, nowMs: number): boolean {
  if (!row || row.status !== 'active' || row.merchant_status !== 'active') return false;
  if (row.expires_at && new Date(row.expires_at).getTime() <= nowMs) return false;
  if (row.secret_hash === secretHash) return true;
  return row.previous_secret_hash === secretHash && !!row.previous_valid_until && new Date(row.previous_valid_until).getTime() > nowMs;
}

export async function authenticateMerchant(
  s: ApiServices,
  apiKey: string | undefined,
  apiSecret: string | undefined,
): Promise<MerchantCredential> {
  if (!apiKey || !apiSecret || apiKey.length > 200 || apiSecret.length > 200) {
    throw new DomainError('unauthorized', UNAUTHORIZED);
  }
  let row = s.keyCache.get(apiKey);
  if (!row) {
    const generation = s.keyCache.generation();
    row = await readKeyRow(s.knex, apiKey);
    if (row) s.keyCache.set(apiKey, row, generation);
  }
  // Compare even when the key is unknown, so timing does not tell a known key from an unknown one.
  const current = s.secrets.matches(apiSecret, row?.secret_hash ?? '0'.repeat(64));
  const previous = !!row?.previous_secret_hash && s.secrets.matches(apiSecret, row.previous_secret_hash);
  const secretHash = current ? row!.secret_hash : previous ? row!.previous_secret_hash! : '';
  if (!row || !(current || previous) || !credentialStands(row, secretHash, s.clock.now().getTime())) {
    throw new DomainError('unauthorized', UNAUTHORIZED);
  }
  return { merchantId: row.merchant_id, apiKey, secretHash, scopes: row.scopes };
}

export function authenticateAdmin(adminToken: string, header: string | undefined): void {
  const presented = header?.startsWith('Bearer ') ? header.slice(7) : '';
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(adminToken).digest();
  if (!presented || !timingSafeEqual(a, b)) throw new DomainError('unauthorized', 'Missing or invalid operator token');
}
