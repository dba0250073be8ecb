// This API process's open event streams (GET /events/stream): one EventFeedWatch for all of them
// (one LISTEN connection, one query per wake-up), a lease per stream for the bound on open streams
// per merchant across processes (leases.ts), and closing them all at shutdown (an open stream would
// keep the HTTP server from closing).
import type { ApiServices } from '../services.ts';
import { DomainError } from '../../domain/errors.ts';
import { EventFeedWatch } from '../../projections/event-feed-watch.ts';
import { merchantFeedHead } from '../../projections/event-feed.ts';
import { RateLimited } from '../middleware/throttle.ts';
import { EventStreamSession } from './session.ts';
import { StreamLeases } from './leases.ts';
import { StreamCredentialWatch } from './credentials.ts';
import type { MerchantCredential } from '../auth.ts';

/** What a refused stream's Retry-After says: a stream slot frees when one of the merchant's streams ends. */
const RETRY_AFTER_SECONDS = 5;

class EventStreams {
  private readonly watch: EventFeedWatch;
  private readonly leases: StreamLeases;
  private readonly credentials: StreamCredentialWatch;
  private readonly open = new Set<EventStreamSession>();
  private closed = false;

  constructor(private readonly s: ApiServices) {
    this.watch = new EventFeedWatch(s.knex, s.db.url, s.config.eventStreamPollMs,
      (err) => s.log.warn({ err }, 'event feed watch: look for new events failed; trying again'));
    this.leases = new StreamLeases(s.knex, s.config.eventStreamLeaseMs, (err) => s.log.warn({ err }, 'event stream lease: renewal or release failed (it expires)'));
    this.credentials = new StreamCredentialWatch(s.knex, s.clock, () => this.open,
      (err) => s.log.warn({ err }, 'event streams: checking their credentials failed; trying again'));
  }

  /**
   * A stream of the merchant's events after `after` (a feed position; its newest event when
   * undefined), ready to attach to a response: the merchant holds a slot for it until it ends.
   * Past the bound: 429 rate_limited.
   */
  async openStream(credential: MerchantCredential, after: bigint | undefined, requestLog: ApiServices['log']): Promise<EventStreamSession> {
    if (this.closed) throw new DomainError('service_unavailable', 'The service is shutting down; reconnect with Last-Event-ID');
    const { merchantId } = credential;
    const limit = this.s.config.eventStreamsPerMerchant;
    const session = new EventStreamSession(this.s.knex, credential, after ?? 0n, this.s.config.eventStreamHeartbeatMs, requestLog);
    // A lease lost and not won back (a renewal outage past its lifetime, the slots taken meanwhile) ends the stream.
    const lease = await this.leases.take(merchantId, limit, () => session.close());
    if (!lease) throw new RateLimited(RETRY_AFTER_SECONDS, `Too many open event streams for this merchant (at most ${limit}); close one first`);
    this.open.add(session);
    session.whenClosed(() => {
      this.open.delete(session);
      void this.leases.release(lease);
    });
    try {
      // Subscribed before the first read (the watch's guarantee), and the start read after it.
      const unsubscribe = await this.watch.subscribe(merchantId, () => session.wake());
      session.whenClosed(unsubscribe);
      if (after === undefined) session.startAfter(await merchantFeedHead(this.s.knex, merchantId));
    } catch (err) {
      session.close();
      throw err;
    }
    return session;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.credentials.close();
    const leases = this.leases.close();
    for (const session of [...this.open]) session.close();
    await Promise.all([this.watch.close(), leases]);
  }
}

const byServices = new WeakMap<ApiServices, EventStreams>();

export function eventStreamsOf(s: ApiServices): EventStreams {
  let streams = byServices.get(s);
  if (!streams) byServices.set(s, (streams = new EventStreams(s)));
  return streams;
}

/** Ends every open event stream of this process (shutdown: clients resume elsewhere with Last-Event-ID). */
export async function closeEventStreams(s: ApiServices): Promise<void> {
  await byServices.get(s)?.close();
}
