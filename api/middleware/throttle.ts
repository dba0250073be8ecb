// The abuse limits of api/rate-limit.ts applied to requests: a refusal is 429 rate_limited with
// Retry-After (errors.ts). Failed authentications are checked before the credentials are
// (authenticate.ts); the per-key bucket is spent only by a merchant call that authenticated.
import type { Request, RequestHandler } from 'express';
import type { Config } from '../../infra/config.ts';
import type { Clock } from '../../infra/clock.ts';
import { FailureWindow, TokenBuckets } from '../rate-limit.ts';

/** A refusal that tells the caller when to try again. */
export class RateLimited extends Error {
  constructor(readonly retryAfterSeconds: number, message: string) {
    super(message);
  }
}

/** Failed authentications, per presented key and per client address (one per app, like the buckets). */
export class AuthFailures {
  private readonly byKey: FailureWindow;
  private readonly byIp: FailureWindow;

  constructor(c: Config) {
    this.byKey = new FailureWindow(c.authFailuresPerWindow, c.authFailureWindowSeconds * 1000);
    // One address may front many merchants (NAT, a proxy): looser than per key, still bounded.
    this.byIp = new FailureWindow(c.authFailuresPerWindow * 5, c.authFailureWindowSeconds * 1000);
  }

  /**
   * Refuses a caller (its address or the key it presents) with too many recent failures; else
   * answers the call that counts this attempt as failed.
   */
  admit(req: Request, presentedKey: string, nowMs: number): () => void {
    const ipKey = `ip:${req.socket.remoteAddress ?? ''}`;
    const presented = `key:${presentedKey}`;
    const wait = Math.max(this.byIp.blockedFor(ipKey, nowMs), this.byKey.blockedFor(presented, nowMs));
    if (wait > 0) throw new RateLimited(wait, 'Too many failed authentications; try again later');
    return () => {
      this.byIp.fail(ipKey, nowMs);
      this.byKey.fail(presented, nowMs);
    };
  }
}

/**
 * A merchant's authenticated call takes one token from its API key's bucket (make one per app: every
 * route shares its buckets). The buckets refill by the service's clock, so a test can hold time
 * still (a ManualClock) and see the burst and the refill whatever the machine's speed.
 */
export function limitRate(c: Config, clock: Clock): RequestHandler {
  const buckets = new TokenBuckets(c.rateLimitPerSecond, c.rateLimitBurst);
  return (req, _res, next) => {
    const retry = buckets.take(req.header('x-api-key')!, clock.now().getTime());
    if (retry > 0) throw new RateLimited(retry, 'Rate limit exceeded for this API key');
    next();
  };
}
