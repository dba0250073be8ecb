// Tells this process's open event streams (GET /events/stream) that their merchant has new events,
// whichever process recorded them, without a database connection per stream: one LISTEN connection
// (the table's NOTIFY, migration 024) and one query per wake-up for every stream of the process:
// which of the watched merchants have events past the newest position this watch has seen of each
// (one index probe per merchant). Each stream then reads its own events after its own position
// (event-feed.ts).
//
// Why no stream misses an event: a merchant's positions become visible in order (event-feed.ts;
// across merchants they do not, migration 034, so each merchant has its own head here).
// `subscribe` reads the merchant's head H before a stream's first read; an event that stream's
// first read does not see committed after it, so its position is above H and above anything a
// later look has seen of that merchant, and the next look after its commit (its NOTIFY, else the
// poll) finds it and wakes the stream.
import type { Knex } from 'knex';
import { PgNotifications } from '../infra/pg-notifications.ts';
import { merchantHeads } from './event-feed.ts';

const CHANNEL = 'webhook_feed';

export class EventFeedWatch {
  /** The newest position seen of each watched merchant. */
  private readonly heads = new Map<string, bigint>();
  private started = false;
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
      // Nobody watching the merchant: its next stream reads its head afresh.
      if (set.size === 0 && this.byMerchant.get(merchantId) === set) {
        this.byMerchant.delete(merchantId);
        this.heads.delete(merchantId);
      }
    };
    try {
      await this.start();
      if (!this.heads.has(merchantId)) {
        const head = (await merchantHeads(this.knex, [merchantId])).get(merchantId) ?? 0n;
        if (this.byMerchant.get(merchantId) === set && !this.heads.has(merchantId)) this.heads.set(merchantId, head);
      }
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  private start(): Promise<void> {
    if (this.started) return Promise.resolve();
    this.starting ??= (async () => {
      await this.notifications.ensure();
      this.started = true;
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
      if (this.heads.size === 0) continue;
      try {
        await this.notifications.ensure();
        await this.look();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Wakes the streams of every watched merchant whose head moved past the one seen. */
  private async look(): Promise<void> {
    const now = await merchantHeads(this.knex, [...this.heads.keys()]);
    for (const [merchantId, head] of now) {
      const seen = this.heads.get(merchantId);
      // Unwatched meanwhile (or watched afresh, with a head read after this look's): left as it is.
      if (seen === undefined || head <= seen) continue;
      this.heads.set(merchantId, head);
      for (const wake of this.byMerchant.get(merchantId) ?? []) wake();
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
