// One provider call over HTTP, told apart the way the gateway needs (CONTRACT §15): an answer (any
// status: the adapter reads it), a failure before the request left (certainly not taken: connection
// refused, no such host), or a failure after it may have left (in doubt: a time-out, a reset).
import { LegNotTaken } from './types.ts';

export interface ProviderResponse {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: unknown;
  text: string;
}

/** The request may have reached the provider: never a reason to fail over. */
export class ProviderInDoubt extends Error {
  override name = 'ProviderInDoubt';
}

// Errors raised before a byte of the request was sent (undici reports them as the cause of "fetch failed").
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Sends one request within `timeoutMs`. Throws LegNotTaken when nothing was sent and ProviderInDoubt
 * when the outcome is unknown; answers every HTTP status (the adapter's error map reads it).
 */
export async function providerCall(provider: string, url: string, init: RequestInit, timeoutMs: number): Promise<ProviderResponse> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const code = causeCode(err);
    if (code && NOT_SENT.has(code)) throw new LegNotTaken(`${provider} unreachable (${code})`);
    const what = (err as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : `failed (${code ?? (err as Error).message})`;
    throw new ProviderInDoubt(`${provider} call ${what}`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    throw new ProviderInDoubt(`${provider} answer cut off (HTTP ${res.status})`);
  }
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}
