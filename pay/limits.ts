// The payer's page is public: its abuse limits (CONTRACT §16), per process like the API's
// (api/rate-limit.ts token buckets, bounded maps). Every request counts against its client address;
// a payment attempt also counts against the address and against the link, since each attempt sends a
// payment request to somebody's phone. The per-link bucket is looser (many payers share one link).
import type { Request } from 'express';
import type { Config } from '../infra/config.ts';
import { TokenBuckets } from '../api/rate-limit.ts';

const perMinute = (n: number) => new TokenBuckets(n / 60, n);

export class PayLimits {
  private readonly requests: TokenBuckets;
  private readonly submitsByAddress: TokenBuckets;
  private readonly submitsByLink: TokenBuckets;

  constructor(c: Config) {
    this.requests = perMinute(c.payRequestsPerMinute);
    this.submitsByAddress = perMinute(c.paySubmitsPerMinute);
    this.submitsByLink = perMinute(c.paySubmitsPerMinute * 3);
  }

  /** Seconds to wait before this address may send another request (0: allowed now). */
  request(req: Request, nowMs: number): number {
    return this.requests.take(addressOf(req), nowMs);
  }

  /** Seconds to wait before another payment attempt from this address on this link (0: allowed now). */
  submit(req: Request, linkId: string, nowMs: number): number {
    // An address refused spends nothing of the link's bucket: one address cannot close a link to others.
    const wait = this.submitsByAddress.take(addressOf(req), nowMs);
    return wait > 0 ? wait : this.submitsByLink.take(linkId, nowMs);
  }
}

/** The peer's address, as the API's limits read it (no proxy header is trusted). */
const addressOf = (req: Request) => req.socket.remoteAddress ?? '';
