// Verifies a webhook delivery of the Merchant Payments API, for merchants' receivers. Standalone:
// it depends on node:crypto only, so it can be copied into a merchant's code base as is.
//
//   const event = verifyWebhook(rawBody, req.headers, process.env.SIGNING_SECRET!);
//
// Several secrets are accepted (an array): each webhook endpoint has its own secret, and a rotation
// is staged (the current secret signs until the new one's `activates_at`), so a receiver adds the new
// secret as soon as the rotation answers it, keeps both until then, and drops the old one after:
//
//   const event = verifyWebhook(rawBody, req.headers, [process.env.SIGNING_SECRET!, process.env.NEXT_SIGNING_SECRET!]);
//
// It checks, before the body is parsed or acted on: the headers are present; X-Service-Timestamp is
// Unix seconds within `toleranceSeconds` of now (replay window); X-Service-Signature is
// `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` under the signing secret (compared in
// constant time); the body is a JSON event envelope whose `id` equals X-Service-Webhook-Id. Any
// failure throws a WebhookVerificationError whose `code` says which check failed.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  event: string;
  created_at: string;
  data: { type: string; id: string; object: T };
}

export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Node's IncomingHttpHeaders, a plain object (any case), or a Fetch API Headers. */
export type HeaderSource =
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

export interface VerifyOptions {
  /** Largest accepted distance between X-Service-Timestamp and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time: a Date or epoch milliseconds (Date.now()). Default: the system clock. */
  now?: Date | number;
}

export const SIGNATURE_HEADER = 'x-service-signature';
export const TIMESTAMP_HEADER = 'x-service-timestamp';
export const EVENT_HEADER = 'x-service-event';
export const WEBHOOK_ID_HEADER = 'x-service-webhook-id';

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  if (Array.isArray(value)) return value[0];
  return value;
}

/** The signature the service sends for this timestamp and body: `sha256=<hex>`. */
export function computeSignature(secret: string, timestamp: string, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(rawBody);
  return `sha256=${mac.digest('hex')}`;
}

function safeEqual(expected: string, presented: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(presented, 'utf8');
  // Compare equal lengths only (timingSafeEqual requires it); a different length is simply wrong.
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

/**
 * Verifies one delivery and returns the parsed event; throws WebhookVerificationError otherwise.
 * `secret` may be a list (for example the old and the new secret while you rotate it).
 */
export function verifyWebhook<T = Record<string, unknown>>(
  rawBody: string | Buffer,
  headers: HeaderSource,
  secret: string | string[],
  opts: VerifyOptions = {},
): WebhookEvent<T> {
  const toleranceSeconds = opts.toleranceSeconds ?? 300;
  const secrets = (Array.isArray(secret) ? secret : [secret]).filter((s) => typeof s === 'string' && s.length > 0);
  if (secrets.length === 0) throw new TypeError('verifyWebhook: a signing secret is required');
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) {
    throw new TypeError('verifyWebhook: pass the raw request body (string or Buffer), not parsed JSON');
  }

  const signature = header(headers, SIGNATURE_HEADER);
  const timestamp = header(headers, TIMESTAMP_HEADER);
  if (!signature) throw new WebhookVerificationError('missing_header', 'X-Service-Signature is missing');
  if (!timestamp) throw new WebhookVerificationError('missing_header', 'X-Service-Timestamp is missing');
  if (!/^[0-9]{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'X-Service-Timestamp is not Unix seconds');

  const nowMs = opts.now === undefined ? Date.now() : typeof opts.now === 'number' ? opts.now : opts.now.getTime();
  if (Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `X-Service-Timestamp is more than ${toleranceSeconds} s away from now`);
  }

  // The header may carry several signatures (comma-separated); one valid one is enough.
  const presented = signature.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  let valid = false;
  for (const s of secrets) {
    const expected = computeSignature(s, timestamp, rawBody);
    for (const p of presented) if (safeEqual(expected, p)) valid = true;
  }
  if (!valid) throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match the body');

  let event: WebhookEvent<T>;
  try {
    event = JSON.parse(Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody) as WebhookEvent<T>;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The body is not JSON');
  }
  if (!event || typeof event !== 'object' || typeof event.id !== 'string' || typeof event.event !== 'string' || !event.data || typeof event.data !== 'object') {
    throw new WebhookVerificationError('invalid_payload', 'The body is not a webhook event');
  }
  const webhookId = header(headers, WEBHOOK_ID_HEADER);
  if (webhookId !== undefined && webhookId !== event.id) {
    throw new WebhookVerificationError('invalid_payload', 'X-Service-Webhook-Id does not match the event id');
  }
  const eventName = header(headers, EVENT_HEADER);
  if (eventName !== undefined && eventName !== event.event) {
    throw new WebhookVerificationError('invalid_payload', 'X-Service-Event does not match the event name');
  }
  return event;
}
