// A bounded GET of a URL supplied by a merchant (KYC files), safe against server-side request
// forgery (CONTRACT.md §1):
//  - http(s) only, no credentials in the URL; unless ALLOW_PRIVATE_URLS, https only and IP-literal
//    hosts must be public (url-safety.ts staticRefusal: node:net never calls `lookup` for a literal);
//  - a host name is resolved at connect time by safeLookup, which refuses any non-public answer
//    (loopback, private, link-local, CGNAT, IPv4-mapped loopback, metadata…), so a DNS answer that
//    changes after the URL was accepted (rebinding) still cannot reach an internal address;
//  - redirects are followed by hand, at most `maxRedirects`, each hop checked like the first;
//  - one deadline (`timeoutMs`) covers every hop, the headers and the whole body;
//  - the body is counted while it streams and the transfer is cut at `maxBytes` (a Content-Length
//    over the cap is refused before reading); only the first `headBytes` are kept (for type sniffing)
//    and a SHA-256 of the whole body is computed on the way.
// One fresh socket per hop (no agent, no keep-alive), no cookies, no decompression.
import http from 'node:http';
import https from 'node:https';
import { createHash } from 'node:crypto';
import { safeLookup, staticRefusal, type UrlPolicy } from './url-safety.ts';

export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** How much of the start of the body to keep. */
  headBytes: number;
}

/**
 * Sends one hop's request. The default picks node:http or node:https by scheme; tests put a stand-in
 * for a public host here (they never send traffic to a public address).
 */
export type Transport = (url: URL, options: http.RequestOptions, onResponse: (res: http.IncomingMessage) => void) => http.ClientRequest;

const defaultTransport: Transport = (url, options, onResponse) =>
  (url.protocol === 'https:' ? https : http).request(url, options, onResponse);

export type FetchFailureCode = 'unsafe_url' | 'http_error' | 'too_many_redirects' | 'too_large' | 'timeout' | 'network_error';

export type FetchResult =
  | { ok: true; statusCode: number; head: Buffer; sizeBytes: number; sha256: string; redirects: number }
  | { ok: false; code: FetchFailureCode; message: string; statusCode?: number };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Hop =
  | { kind: 'done'; result: FetchResult }
  | { kind: 'redirect'; location: string; statusCode: number };

/** GETs `raw` within the limits; never throws for anything the remote end does. */
export async function fetchLimited(
  raw: string, policy: UrlPolicy, limits: FetchLimits,
  opts: { transport?: Transport; userAgent?: string } = {},
): Promise<FetchResult> {
  const transport = opts.transport ?? defaultTransport;
  const userAgent = opts.userAgent ?? 'merchant-payments-kyc/1.0';
  const deadline = performance.now() + limits.timeoutMs;
  let current = raw;
  for (let redirects = 0; ; redirects++) {
    const refused = staticRefusal(current, policy);
    if (refused) return { ok: false, code: 'unsafe_url', message: redirects === 0 ? refused : `redirected to a refused URL: ${refused}` };
    const remainingMs = deadline - performance.now();
    if (remainingMs <= 0) return timedOut(limits);
    const hop = await oneHop(transport, new URL(current), policy, limits, remainingMs, userAgent);
    if (hop.kind === 'done') return hop.result.ok ? { ...hop.result, redirects } : hop.result;
    if (redirects >= limits.maxRedirects) {
      return { ok: false, code: 'too_many_redirects', message: `more than ${limits.maxRedirects} redirects`, statusCode: hop.statusCode };
    }
    try {
      current = new URL(hop.location, current).toString();
    } catch {
      return { ok: false, code: 'http_error', message: 'redirect without a valid Location', statusCode: hop.statusCode };
    }
  }
}

const timedOut = (limits: FetchLimits): FetchResult => ({ ok: false, code: 'timeout', message: `not received within ${limits.timeoutMs} ms` });

function oneHop(transport: Transport, url: URL, policy: UrlPolicy, limits: FetchLimits, remainingMs: number, userAgent: string): Promise<Hop> {
  return new Promise<Hop>((resolve) => {
    let settled = false;
    const done = (hop: Hop) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(hop);
    };
    const fail = (code: FetchFailureCode, message: string, statusCode?: number) =>
      done({ kind: 'done', result: statusCode === undefined ? { ok: false, code, message } : { ok: false, code, message, statusCode } });

    const req = transport(url, {
      method: 'GET',
      headers: { 'User-Agent': userAgent, Accept: 'image/*, application/pdf', 'Accept-Encoding': 'identity' },
      lookup: safeLookup(policy),
      agent: false,
    }, (res) => {
      const status = res.statusCode ?? 0;
      res.on('error', () => fail('network_error', 'the connection failed while reading'));
      if (REDIRECTS.has(status)) {
        const location = res.headers.location;
        if (!location) return fail('http_error', `HTTP ${status} without a Location`, status);
        return done({ kind: 'redirect', location, statusCode: status });
      }
      if (status < 200 || status >= 300) return fail('http_error', `the server answered HTTP ${status}`, status);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        return fail('too_large', `larger than ${limits.maxBytes} bytes (Content-Length ${declared})`);
      }
      const hash = createHash('sha256');
      const head: Buffer[] = [];
      let headLength = 0;
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > limits.maxBytes) return fail('too_large', `larger than ${limits.maxBytes} bytes`);
        hash.update(chunk);
        if (headLength < limits.headBytes) {
          const part = chunk.subarray(0, limits.headBytes - headLength);
          head.push(part);
          headLength += part.length;
        }
      });
      res.on('end', () => done({
        kind: 'done',
        result: { ok: true, statusCode: status, head: Buffer.concat(head), sizeBytes: size, sha256: hash.digest('hex'), redirects: 0 },
      }));
      res.on('aborted', () => fail('network_error', 'the connection closed before the end of the file'));
    });
    const timer = setTimeout(() => {
      fail('timeout', `not received within ${limits.timeoutMs} ms`);
    }, remainingMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EUNSAFEADDRESS') return fail('unsafe_url', `${url.hostname} resolves to a non-public address`);
      if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return fail('network_error', `${url.hostname} does not resolve`);
      fail('network_error', `connection failed (${err.code ?? 'error'})`);
    });
    req.end();
  });
}
