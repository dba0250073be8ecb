// MTN MoMo access tokens, one per product (CONTRACT §15): fetched with Basic apiUser:apiKey and
// the product's subscription key, reused until 60 s before `expires_in` (the margin covers clock
// drift and a call in flight when the token turns), dropped when a call is answered 401. Callers
// that need a token while one is being fetched wait for that fetch: a burst of legs costs one call.
import type { ProviderHttp } from '../http.ts';
import { tokenPath, type Product } from './requests.ts';
import { MTN_MOMO } from './transformers.ts';

const REFRESH_MARGIN_MS = 60_000;

/** No token could be had. Nothing of a leg was sent: an initiation reads it as certainly not taken. */
export class TokenUnavailable extends Error {
  override name = 'TokenUnavailable';
}

interface Cached {
  token: string;
  refreshAt: number;
}

export interface TokenSource {
  baseUrl: string;
  product: Product;
  credentials: { subscriptionKey: string; apiUser: string; apiKey: string };
  http: ProviderHttp;
  now: () => number;
}

export class MtnTokens {
  private cached: Cached | undefined;
  private fetching: Promise<Cached> | undefined;

  constructor(private readonly source: TokenSource) {}

  /** A token valid for a while yet; throws TokenUnavailable (whose message names no secret). */
  async token(): Promise<string> {
    const c = this.cached;
    if (c && this.source.now() < c.refreshAt) return c.token;
    this.fetching ??= this.fetch().finally(() => { this.fetching = undefined; });
    return (await this.fetching).token;
  }

  /** A call was answered 401 with this token: the next caller fetches a new one (once, not once per caller). */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  private async fetch(): Promise<Cached> {
    const { baseUrl, product, credentials, http } = this.source;
    const basic = Buffer.from(`${credentials.apiUser}:${credentials.apiKey}`).toString('base64');
    let res;
    try {
      // An empty body still sends `Content-Length: 0`: MTN's gateway answers 411 to a POST without it.
      res = await http.call(`${baseUrl.replace(/\/+$/, '')}${tokenPath(product)}`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'ocp-apim-subscription-key': credentials.subscriptionKey, 'content-length': '0' },
        body: '',
      });
    } catch (err) {
      throw new TokenUnavailable(`${MTN_MOMO} ${product} token: ${(err as Error).message}`);
    }
    // Only the status goes into the message: a token answer's body is a secret when it succeeds.
    if (res.status !== 200) throw new TokenUnavailable(`${MTN_MOMO} ${product} token: HTTP ${res.status}`);
    const body = res.json as { access_token?: unknown; expires_in?: unknown } | undefined;
    const token = body?.access_token;
    const expiresIn = Number(body?.expires_in);
    if (typeof token !== 'string' || token.length === 0 || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new TokenUnavailable(`${MTN_MOMO} ${product} token: malformed answer`);
    }
    const cached = { token, refreshAt: this.source.now() + expiresIn * 1000 - REFRESH_MARGIN_MS };
    this.cached = cached;
    return cached;
  }
}
