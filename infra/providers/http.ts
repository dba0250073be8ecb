// One provider call over HTTP, told apart the way the gateway needs (CONTRACT §15): an answer (any
// status: the adapter reads it), a failure before the request left (certainly not taken: connection
// refused, no such host), or a failure after it may have left (in doubt: a time-out, a reset).
//
// Sent with node:http(s) over keep-alive agents rather than fetch: a payin through a real provider
// makes two calls (its initiation and its status), and fetch's web streams, Headers and abort
// machinery cost about 0.6 ms of CPU more per call than http.request on one reused connection
// (measured side by side on this machine; bench/PROFILE.md §25), which was most of the gap between
// a payin through MTN and one through the sandbox.
import http from 'node:http';
import https from 'node:https';
import { LegNotTaken } from './types.ts';

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PUT';
  headers: Record<string, string>;
  body?: string;
}

export interface ProviderResponse {
  status: number;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: unknown;
  text: string;
}

/** The request may have reached the provider: never a reason to fail over. */
export class ProviderInDoubt extends Error {
  override name = 'ProviderInDoubt';
}

/**
 * A call whose failure, whatever it was, leaves the leg in doubt: a status query (the provider
 * unreachable is not "never seen", and its LegNotTaken, "nothing sent", means nothing for a read).
 */
export function inDoubtIfFailed<T>(call: Promise<T>, what: string): Promise<T> {
  return call.catch((err: unknown) => {
    throw err instanceof ProviderInDoubt ? err : new ProviderInDoubt(`${what}: ${(err as Error).message}`);
  });
}

// Errors raised before a byte of the request was sent.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);
/** Connections kept open per provider host: a provider sees at most this many at once from a process. */
const MAX_SOCKETS = 32;
/**
 * An idle connection is closed after this, before the provider's own keep-alive time-out would
 * (5 s and more on common servers), so that few requests are written on a connection the server
 * is closing.
 */
const IDLE_MS = 4_000;
/** How a connection that was reused can fail when its server had closed it while idle. */
const STALE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

class TimedOut extends Error {}

interface Agents { 'http:': http.Agent; 'https:': https.Agent }

/** A failure on a kept-alive connection before any answer: the server may have closed it while idle. */
class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

function send(agents: Agents, url: URL, req: ProviderRequest, timeoutMs: number): Promise<{ status: number; text: string }> {
  const agent = agents[url.protocol as keyof Agents];
  if (!agent) return Promise.reject(Object.assign(new Error(`unsupported protocol ${url.protocol}`), { code: 'ERR_INVALID_URL' }));
  const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
  return new Promise((resolve, reject) => {
    const outgoing = (url.protocol === 'https:' ? https : http).request(url, { method: req.method, headers, agent });
    let answered = false;
    // The whole exchange (connection, answer and its body) within timeoutMs.
    const timer = setTimeout(() => outgoing.destroy(new TimedOut()), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      const code = (err as { code?: unknown }).code;
      reject(!answered && outgoing.reusedSocket && typeof code === 'string' && STALE.has(code) ? new StaleConnection(err) : err);
    };
    outgoing.on('error', fail);
    outgoing.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        if (!res.complete) return reject(Object.assign(new Error('answer cut off'), { code: 'ECONNRESET' }));
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    outgoing.end(req.body);
  });
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * One provider's connections (kept alive between its calls) and its calls through them. Each call is
 * sent within `timeoutMs`; it throws LegNotTaken when nothing was sent and ProviderInDoubt when the
 * outcome is unknown, and answers every HTTP status (the adapter's error map reads it).
 *
 * A reused connection that fails before any answer is most often one the provider closed while it
 * was idle: the call is made once more on a new connection. Every call a provider adapter makes is
 * safe to repeat (a leg goes under our reference, which the provider dedupes; the rest are reads and
 * token requests). The first attempt may still have reached the provider, so when the second finds
 * it unreachable the call is in doubt, never "not taken".
 */
export class ProviderHttp {
  private readonly agents: Agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, timeout: IDLE_MS }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, timeout: IDLE_MS }),
  };

  constructor(private readonly provider: string, private readonly timeoutMs: number) {}

  async call(url: string, req: ProviderRequest): Promise<ProviderResponse> {
    let answer: { status: number; text: string };
    try {
      answer = await this.answer(url, req);
    } catch (err) {
      throw this.classified(err);
    }
    let json: unknown;
    try {
      json = answer.text.length > 0 ? JSON.parse(answer.text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: answer.status, json, text: answer.text };
  }

  private async answer(url: string, req: ProviderRequest): Promise<{ status: number; text: string }> {
    const target = new URL(url);
    try {
      return await send(this.agents, target, req, this.timeoutMs);
    } catch (err) {
      if (!(err instanceof StaleConnection)) throw err;
      try {
        return await send(this.agents, target, req, this.timeoutMs);
      } catch (again) {
        throw NOT_SENT.has(codeOf(again) ?? '') ? err.cause : again;
      }
    }
  }

  private classified(err: unknown): Error {
    const code = codeOf(err instanceof StaleConnection ? err.cause : err);
    if (code && NOT_SENT.has(code)) return new LegNotTaken(`${this.provider} unreachable (${code})`);
    const what = err instanceof TimedOut ? `timed out after ${this.timeoutMs} ms` : `failed (${code ?? (err as Error).message})`;
    return new ProviderInDoubt(`${this.provider} call ${what}`);
  }
}
