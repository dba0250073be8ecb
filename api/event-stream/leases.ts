// The bound on open event streams per merchant, across every API process (CONTRACT.md §12): each
// open stream holds a lease row (migration 024) that its process renews while it is open and deletes
// when it ends; a process that dies leaves leases that expire after LEASE_TTL_MS. Taking a lease
// counts the merchant's live ones under a per-merchant advisory lock, so two processes cannot both
// take the last slot. The database's clock decides expiry (processes' clocks may differ).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** How long a lease outlives its last renewal (a crashed process's streams free their slots after this). */
const LEASE_TTL_MS = 30_000;
const RENEW_EVERY_MS = LEASE_TTL_MS / 3;
/** The advisory lock class of the per-merchant lease count (the merchant's hash is the second key). */
const LEASE_LOCK_CLASS = 7_201_424;

export class StreamLeases {
  private readonly held = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly knex: Knex, private readonly onError: (err: unknown) => void) {
    this.timer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.timer.unref();
  }

  /** A lease on one of the merchant's `limit` slots; undefined when they are all taken. */
  async take(merchantId: string, limit: number): Promise<string | undefined> {
    const ttl = this.knex.raw('now() + make_interval(secs => ?)', [LEASE_TTL_MS / 1000]);
    const id = await this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [LEASE_LOCK_CLASS, merchantId]);
      await trx('event_stream_leases').where({ merchant_id: merchantId }).where('expires_at', '<=', trx.raw('now()')).delete();
      const row = (await trx('event_stream_leases').where({ merchant_id: merchantId }).count({ n: '*' }).first()) as { n: string | number };
      if (Number(row.n) >= limit) return undefined;
      const lease = randomUUID();
      await trx('event_stream_leases').insert({ id: lease, merchant_id: merchantId, expires_at: ttl });
      return lease;
    });
    if (id) this.held.add(id);
    return id;
  }

  /** Frees a slot (the stream ended); a failure leaves the lease to expire. */
  async release(id: string): Promise<void> {
    if (!this.held.delete(id)) return; // freed already (shutdown frees them all at once)
    await this.knex('event_stream_leases').where({ id }).delete().catch(this.onError);
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    await this.knex('event_stream_leases').whereIn('id', [...this.held])
      .update({ expires_at: this.knex.raw('now() + make_interval(secs => ?)', [LEASE_TTL_MS / 1000]) })
      .catch(this.onError);
  }

  /** Frees every slot this process holds (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const ids = [...this.held];
    this.held.clear();
    if (ids.length > 0) await this.knex('event_stream_leases').whereIn('id', ids).delete().catch(this.onError);
  }
}
