// A provider's id for one of our legs. MTN's X-Reference-Id and pawaPay's depositId, payoutId and
// refundId must be UUIDs v4; our leg references are a payin's id (already one) or a transfer's leg
// (`transfer:<id>:collection`). The id is derived from the reference alone, so every retry, every
// process and every restart sends the same one: the provider's idempotency holds.
import { createHash } from 'node:crypto';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function uuidV4For(reference: string): string {
  if (UUID_V4.test(reference)) return reference;
  const b = createHash('sha256').update(`leg-id\n${reference}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
