// Load generation with autocannon (run from the bench driver, a separate process from the server).
import autocannon from 'autocannon';

export interface LoadResult {
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationMs: number;
  /** 2xx responses per second. */
  okPerSecond: number;
  p50: number;
  p99: number;
  statusCodes: Record<string, number>;
}

/** `onResponse`: told each response's status and time (ms), for percentiles over several runs. */
export async function load(opts: Omit<autocannon.Options, 'duration'> & { seconds: number; onResponse?: (statusCode: number, ms: number) => void }): Promise<LoadResult> {
  const { seconds, onResponse, ...rest } = opts;
  const options = { ...rest, duration: seconds, timeout: 30 };
  const r = onResponse
    ? await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
      instance.on('response', (_client, statusCode, _bytes, ms) => onResponse(statusCode, ms));
    })
    : await autocannon(options);
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = s?.count ?? 0;
  const durationMs = r.duration * 1000;
  return {
    requests: r.requests.total,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    durationMs,
    okPerSecond: durationMs > 0 ? (r['2xx'] * 1000) / durationMs : 0,
    p50: r.latency.p50,
    p99: r.latency.p99,
    statusCodes,
  };
}
