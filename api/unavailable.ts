// A database or bus that is briefly unreachable (restart, failover, connection reset) is not a bug
// in the request: the answer is 503 `service_unavailable` with Retry-After, so a merchant's client
// retries it (with the same Idempotency-Key) instead of treating it as a failure of ours.

// PostgreSQL SQLSTATEs meaning "the server is going away or not accepting connections yet".
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300']);
// Class 08: connection exceptions.
const PG_CONNECTION_CLASS = '08';
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN']);
const MESSAGES = [/Connection terminated/i, /timeout exceeded when trying to connect/i, /Client has encountered a connection error/i];

/** Retry-After for an unavailable dependency: it usually comes back within a second or two. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export function isDependencyUnavailable(err: unknown): boolean {
  // Follow `cause` (and AggregateError's errors) a few levels: drivers wrap what they saw.
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && seen.size < 8) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') {
      if (PG_UNAVAILABLE.has(code) || NET_CODES.has(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code) && code.startsWith(PG_CONNECTION_CLASS)) return true;
    }
    if (typeof message === 'string' && MESSAGES.some((m) => m.test(message))) return true;
    queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return false;
}
