// Tells this process's open event streams (GET /events/stream) that their merchant has new events,
// whichever process recorded them, without a database connection per stream: one LISTEN connection
// (the table's NOTIFY, migration 024) and one query per wake-up for every stream of the process:
// which merchants have events past the newest position this watch has seen. Each stream then
// reads its own events after its own position (event-feed.ts).
//
// Why no stream misses an event: positions become visible in order (event-feed.ts). `ready()`
// reads the head H before a stream's first read; an event that stream's first read does not see
// committed after it, so its position is above H and above anything a later look has seen, and the
// next look after its commit (its NOTIFY, else the poll) finds it and wakes the stream.
import type { Knex } from 'knex';
import { PgNotifications } from '../infra/pg-notifications.ts';
import { feedHead, merchantsMovedAfter } from './event-feed.ts';

const CHANNEL = 'webhook_feed';

export class EventFeedWatch {
  private head: bigint | undefined;
  private starting: Promise<void> | undefined;
  private readonly byMerchant = new Map<string, Set<() => void>>();
  private readonly notifications: PgNotifications;
  private signalled = false;
  private sleeper: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly knex: Knex, dbUrl: string, private readonly pollMs: number, private readonly onError: (err: unknown) => void) {
    this.notifications = new PgNotifications(dbUrl, CHANNEL, () => this.signal());
  }

  /**
   * Registers `wake` for the merchant's new events; resolves once the watch has read the head, so
   * that the caller's first read comes after it. Answers the unsubscribe function.
   */
  async subscribe(merchantId: string, wake: () => void): Promise<() => void> {
    let set = this.byMerchant.get(merchantId);
    if (!set) this.byMerchant.set(merchantId, (set = new Set()));
    set.add(wake);
    const unsubscribe = () => {
      set.delete(wake);
      if (set.size === 0 && this.byMerchant.get(merchantId) === set) this.byMerchant.delete(merchantId);
      // Nobody watching: no looks until the next stream, which reads the head afresh.
      if (this.byMerchant.size === 0) this.head = undefined;
    };
    try {
      await this.start();
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  private start(): Promise<void> {
    if (this.head !== undefined) return Promise.resolve();
    this.starting ??= (async () => {
      await this.notifications.ensure();
      this.head = await feedHead(this.knex);
      this.loop ??= this.run();
    })().finally(() => { this.starting = undefined; });
    return this.starting;
  }

  private signal(): void {
    this.signalled = true;
    this.sleeper?.();
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      if (!this.signalled) await this.sleep();
      this.signalled = false;
      if (this.closed) break;
      const from = this.head;
      if (from === undefined || this.byMerchant.size === 0) continue;
      try {
        await this.notifications.ensure();
        const moved = await merchantsMovedAfter(this.knex, from);
        if (this.head === from) this.head = moved.head;
        for (const m of moved.merchants) for (const wake of this.byMerchant.get(m) ?? []) wake();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      timer.unref?.();
      const self = this;
      function done(): void {
        clearTimeout(timer);
        if (self.sleeper === done) self.sleeper = undefined;
        resolve();
      }
      this.sleeper = done;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.sleeper?.();
    await this.loop;
    await this.notifications.close();
  }
}
