// The bound on open event streams per merchant, across every API process (CONTRACT.md §12): each
// open stream holds a lease row (migration 024) that its process renews while it is open and deletes
// when it ends; a process that dies leaves leases that expire after the lease time. Taking a lease
// counts the merchant's live ones under a per-merchant advisory lock, so two processes cannot both
// take the last slot. The database's clock decides expiry (processes' clocks may differ).
//
// A renewal that finds its row gone (renewals failed for longer than the lease time, a database
// hiccup, and another take deleted it as expired) takes the slot again under the same count, so the
// bound holds after the outage too: when the merchant's slots were taken meanwhile, the stream that
// lost its lease ends (its client reconnects with Last-Event-ID and waits for a slot like any other).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** The advisory lock class of the per-merchant lease count (the merchant's hash is the second key). */
const LEASE_LOCK_CLASS = 7_201_424;

interface Held {
  merchantId: string;
  limit: number;
  /** The lease is lost for good: its stream must end. */
  onLost: () => void;
}

export class StreamLeases {
  private readonly held = new Map<string, Held>();
  private readonly timer: NodeJS.Timeout;
  /** The renewal running, if any: a tick that comes while it runs waits for it instead of racing it. */
  private renewing: Promise<void> | undefined;

  /** `leaseMs`: how long a lease outlives its last renewal (a crashed process's streams free their slots after this). */
  constructor(private readonly knex: Knex, private readonly leaseMs: number, private readonly onError: (err: unknown) => void) {
    this.timer = setInterval(() => void this.renew(), Math.max(10, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  private expiry(k: Knex | Knex.Transaction): Knex.Raw {
    return k.raw('now() + make_interval(secs => ?)', [this.leaseMs / 1000]);
  }

  /** A lease on one of the merchant's `limit` slots; undefined when they are all taken. */
  async take(merchantId: string, limit: number, onLost: () => void): Promise<string | undefined> {
    const id = randomUUID();
    if (!(await this.claimSlot(id, merchantId, limit))) return undefined;
    this.held.set(id, { merchantId, limit, onLost });
    return id;
  }

  /** Inserts lease `id` if the merchant has a free slot, counted under the merchant's lock. */
  private claimSlot(id: string, merchantId: string, limit: number): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [LEASE_LOCK_CLASS, merchantId]);
      await trx('event_stream_leases').where({ merchant_id: merchantId }).where('expires_at', '<=', trx.raw('now()')).delete();
      const row = (await trx('event_stream_leases').where({ merchant_id: merchantId }).count({ n: '*' }).first()) as { n: string | number };
      if (Number(row.n) >= limit) return false;
      await trx('event_stream_leases').insert({ id, merchant_id: merchantId, expires_at: this.expiry(trx) }).onConflict('id').merge();
      return true;
    });
  }

  /** Frees a slot (the stream ended); a failure leaves the lease to expire. */
  async release(id: string): Promise<void> {
    if (!this.held.delete(id)) return; // freed already (shutdown frees them all at once)
    await this.knex('event_stream_leases').where({ id }).delete().catch(this.onError);
  }

  /**
   * Extends every held lease; one whose row is gone (or expired) is taken again, or its stream ends.
   * One renewal at a time: two at once (a tick while the last is still running, as on a loaded
   * machine) would each take the lost slots again and count the other's retaken rows as the
   * merchant's other streams, ending a stream that had its slot.
   */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => { this.renewing = undefined; });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    if (this.held.size === 0) return;
    try {
      const renewed = await this.knex('event_stream_leases').whereIn('id', [...this.held.keys()])
        .where('expires_at', '>', this.knex.raw('now()'))
        .update({ expires_at: this.expiry(this.knex) }, ['id']) as Array<{ id: string }>;
      const kept = new Set(renewed.map((r) => r.id));
      for (const [id, h] of [...this.held]) {
        if (kept.has(id) || !this.held.has(id)) continue;
        if (await this.claimSlot(id, h.merchantId, h.limit)) continue;
        this.held.delete(id);
        h.onLost();
      }
    } catch (err) {
      this.onError(err);
    }
  }

  /** Frees every slot this process holds (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const ids = [...this.held.keys()];
    this.held.clear();
    if (ids.length > 0) await this.knex('event_stream_leases').whereIn('id', ids).delete().catch(this.onError);
  }
}
