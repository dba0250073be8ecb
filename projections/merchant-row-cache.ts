// Rows of the merchant read models kept in memory, so a hot path does not query them each time:
// API-key rows for authentication (api/auth.ts: the secret is still checked against the row's hash
// on every request, expiry dates against the clock; unknown keys are never cached).
//
// As fresh as the read model they come from: the projector clears every such cache after each batch
// that touched a merchant stream (a key created, rotated or revoked; a merchant suspended), in every process, since each process's projector sees every event, and before it wakes
// read-your-writes waiters. A row is cached only if no clear happened while it was being read (the
// generation), so a read that raced a change cannot bring the old row back. MAX_AGE_MS bounds what
// a stalled projector could leave behind.
export const KEY_CACHE_MAX_AGE_MS = 10_000;
const KEY_CACHE_LIMIT = 10_000;

export class MerchantRowCache<Row> {
  private rows = new Map<string, { row: Row; at: number }>();
  private gen = 0;

  constructor(private readonly maxAgeMs = KEY_CACHE_MAX_AGE_MS) {}

  /** The cached row, if fresh enough. */
  get(apiKey: string, now = Date.now()): Row | undefined {
    const hit = this.rows.get(apiKey);
    if (!hit) return undefined;
    if (now - hit.at > this.maxAgeMs) {
      this.rows.delete(apiKey);
      return undefined;
    }
    return hit.row;
  }

  /** Take before reading the row; pass to `set`. */
  generation(): number {
    return this.gen;
  }

  set(apiKey: string, row: Row, readAtGeneration: number, now = Date.now()): void {
    if (readAtGeneration !== this.gen) return; // cleared while it was read: it may be stale
    if (this.rows.size >= KEY_CACHE_LIMIT) this.rows.delete(this.rows.keys().next().value as string);
    this.rows.set(apiKey, { row, at: now });
  }

  clear(): void {
    this.gen++;
    this.rows.clear();
  }
}
