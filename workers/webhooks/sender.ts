// One delivery attempt: a signed POST over node:http(s). The connect-time address is checked by
// safeLookup (DNS rebinding: the name may resolve differently than when the URL was configured),
// an IP-literal host is checked here (no lookup happens for it), redirects are never followed (a
// 3xx is a failed attempt), and the whole attempt is bounded by the time-out.
//
// Connections are kept alive between attempts (bench issue 8: a TCP connection opened and closed
// per webhook was a good part of each delivery's cost). A kept socket was address-checked when it
// connected, and sockets are pooled per URL policy, so one made under a looser policy (private
// addresses allowed) never carries a request made under a stricter one. A kept socket the endpoint
// closed meanwhile fails at once (ECONNRESET, EPIPE): the attempt is then made once more on a new
// connection, as Node's documentation advises (request.reusedSocket).
import http from 'node:http';
import https from 'node:https';
import { createHmac } from 'node:crypto';
import { safeLookup, staticRefusal, type UrlPolicy } from '../../infra/url-safety.ts';

export interface SignedHeaders {
  'Content-Type': 'application/json';
  'X-Service-Signature': string;
  'X-Service-Timestamp': string;
  'X-Service-Event': string;
  'X-Service-Webhook-Id': string;
}

/** `sha256=` + hex HMAC-SHA256 of `<timestamp>.<raw body>`, keyed with the signing secret. */
export function sign(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function signedHeaders(secret: string, body: string, event: string, eventId: string, now: Date): SignedHeaders {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': sign(secret, timestamp, body),
    'X-Service-Timestamp': timestamp,
    'X-Service-Event': event,
    'X-Service-Webhook-Id': eventId,
  };
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** Refusals that need no DNS answer (scheme, credentials, IP-literal hosts): shared with every outbound fetch. */
export { staticRefusal };

const MAX_RESPONSE_DRAIN_MS = 1000;

/** Keep-alive agents per URL policy (its resolver and whether private addresses are allowed). */
const agents = new Map<unknown, Map<string, http.Agent>>();
function agentFor(policy: UrlPolicy, protocol: string): http.Agent {
  let byKind = agents.get(policy.resolver ?? agents);
  if (!byKind) agents.set(policy.resolver ?? agents, (byKind = new Map()));
  const kind = `${protocol}${policy.allowPrivate ? 'private' : 'public'}`;
  let agent = byKind.get(kind);
  if (!agent) {
    const opts = { keepAlive: true, maxFreeSockets: 64 };
    agent = protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
    byKind.set(kind, agent);
  }
  return agent;
}

const staleSocket = (err: NodeJS.ErrnoException) => err.code === 'ECONNRESET' || err.code === 'EPIPE';

export function postWebhook(opts: {
  url: string;
  body: string;
  headers: SignedHeaders;
  timeoutMs: number;
  policy: UrlPolicy;
}): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = staticRefusal(opts.url, opts.policy);
  if (refused) return Promise.resolve({ ok: false, statusCode: null, error: `refused: ${refused}`, durationMs: elapsed() });

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let req: http.ClientRequest;
    const done = (r: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, durationMs: elapsed() });
    };
    const url = new URL(opts.url);
    const payload = Buffer.from(opts.body, 'utf8');
    const client = url.protocol === 'https:' ? https : http;
    const send = (agent: http.Agent | false) => {
      req = client.request(url, {
        method: 'POST',
        headers: { ...opts.headers, 'Content-Length': String(payload.length), 'User-Agent': 'merchant-payments-webhooks/1.0' },
        lookup: safeLookup(opts.policy),
        agent,
      }, (res) => {
        const status = res.statusCode ?? 0;
        res.on('error', () => undefined);
        res.resume(); // the answer's body is not used; drain it briefly, then let the socket go
        setTimeout(() => res.destroy(), MAX_RESPONSE_DRAIN_MS).unref();
        if (status >= 200 && status < 300) done({ ok: true, statusCode: status, error: null });
        else if (status >= 300 && status < 400) done({ ok: false, statusCode: status, error: 'redirect not followed' });
        else done({ ok: false, statusCode: status, error: `non-2xx response` });
      });
      const sent = req;
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (!settled && agent !== false && sent.reusedSocket && staleSocket(err)) return send(false); // closed while kept: once more, afresh
        const refusedAddress = err.code === 'EUNSAFEADDRESS';
        done({ ok: false, statusCode: null, error: refusedAddress ? `refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`.slice(0, 300) });
      });
      sent.end(payload);
    };
    const timer = setTimeout(() => {
      done({ ok: false, statusCode: null, error: `timed out after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    send(agentFor(opts.policy, url.protocol));
  });
}
