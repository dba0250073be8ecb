// Authentication. Merchant calls: X-Api-Key + X-Api-Secret, the secret compared in constant time
// with its keyed hash. Every failure is the same 401 with no hint of which check failed.
// Operator calls: Authorization: Bearer ADMIN_TOKEN.
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../domain/errors.ts';
import type { ApiServices } from './services.ts';
import { readKeyRow } from '../projections/api-keys.ts';

const UNAUTHORIZED = 'Missing, invalid, expired or inactive API credentials';

export async function authenticateMerchant(
  s: ApiServices,
  apiKey: string | undefined,
  apiSecret: string | undefined,
): Promise<string> {
  if (!apiKey || !apiSecret || apiKey.length > 200 || apiSecret.length > 200) {
    throw new DomainError('unauthorized', UNAUTHORIZED);
  }
  let row = s.keyCache.get(apiKey);
  if (!row) {
    const generation = s.keyCache.generation();
    row = await readKeyRow(s.knex, apiKey);
    if (row) s.keyCache.set(apiKey, row, generation);
  }
  const now = s.clock.now().getTime();
  // Compare even when the key is unknown, so timing does not tell a known key from an unknown one.
  const current = s.secrets.matches(apiSecret, row?.secret_hash ?? '0'.repeat(64));
  const previous =
    !!row?.previous_secret_hash &&
    !!row.previous_valid_until &&
    new Date(row.previous_valid_until).getTime() > now &&
    s.secrets.matches(apiSecret, row.previous_secret_hash);
  const expired = !!row?.expires_at && new Date(row.expires_at).getTime() <= now;
  if (!row || !(current || previous) || row.status !== 'active' || expired || row.merchant_status !== 'active') {
    throw new DomainError('unauthorized', UNAUTHORIZED);
  }
  return row.merchant_id;
}

export function authenticateAdmin(adminToken: string, header: string | undefined): void {
  const presented = header?.startsWith('Bearer ') ? header.slice(7) : '';
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(adminToken).digest();
  if (!presented || !timingSafeEqual(a, b)) throw new DomainError('unauthorized', 'Missing or invalid operator token');
}
