// Abuse limits, per process (each API process enforces its own share):
//  - a token bucket per API key (steady rate + burst) → 429 rate_limited with Retry-After;
//  - a stricter window on failed authentications, per presented key and per client address, checked
//    before the credentials are, so guessing secrets is throttled whether or not the key exists.
// Maps are bounded: the oldest entries are dropped first.

const MAX_TRACKED = 100_000;

function bounded<K, V>(map: Map<K, V>): void {
  while (map.size > MAX_TRACKED) map.delete(map.keys().next().value as K);
}

export class TokenBuckets {
  private buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  /** Takes one token; answers 0 when allowed, else the seconds to wait. */
  take(key: string, nowMs: number): number {
    if (this.perSecond <= 0) return 0;
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: nowMs };
    b.tokens = Math.min(this.burst, b.tokens + ((nowMs - b.at) / 1000) * this.perSecond);
    b.at = nowMs;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    bounded(this.buckets);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }
}

export class FailureWindow {
  private entries = new Map<string, { count: number; since: number }>();
  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  /** Seconds to wait before trying again (0 = allowed). */
  blockedFor(key: string, nowMs: number): number {
    const e = this.entries.get(key);
    if (!e || nowMs - e.since >= this.windowMs) return 0;
    return e.count >= this.maxFailures ? Math.ceil((e.since + this.windowMs - nowMs) / 1000) : 0;
  }

  fail(key: string, nowMs: number): void {
    const e = this.entries.get(key);
    if (!e || nowMs - e.since >= this.windowMs) this.entries.set(key, { count: 1, since: nowMs });
    else e.count += 1;
    bounded(this.entries);
  }
}
