// The webhook envelope (seed, "Events"): {id, event, created_at, data: {type, id, object}}. Built
// once, when the event is recorded, and stored as text: every attempt sends exactly these bytes.
import type { RecordedEvent } from '../../infra/eventstore/types.ts';
import { resourceIdOf, stateAt, type WebhookResource } from './resources.ts';
import type { Envelope } from '../../projections/webhook-events.ts';


// Defence in depth: views must never carry these, and a snapshot never does even if one did.
const SECRET_KEY = /(^otp$|^otp_(?!required$)|_otp$|secret|password|(^|_)sealed(_|$)|(^|_)pin$)/i;

/** A deep copy without any key that names an OTP, a secret, a password or sealed material. */
export function scrubSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map(scrubSecrets) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!SECRET_KEY.test(k)) out[k] = scrubSecrets(v);
    return out as T;
  }
  return value;
}

export interface WebhookEventDraft {
  envelope: Envelope;
  body: string;
  merchantId: string | undefined;
  customerId: string | null;
  resourceType: string;
  resourceId: string;
  streamId: string;
  streamVersion: number;
}

/** The envelope of one webhook domain event, with the resource snapshot at that event's version. */
export function draftOf(r: WebhookResource, streamEvents: RecordedEvent[], e: RecordedEvent): WebhookEventDraft {
  const resourceId = resourceIdOf(r, e.streamId);
  const object = scrubSecrets(r.render(stateAt(r, streamEvents, e.version)));
  const envelope: Envelope = {
    id: e.id,
    event: e.type,
    created_at: e.createdAt.toISOString(),
    data: { type: r.type, id: resourceId, object },
  };
  const merchantId = typeof object.merchant_id === 'string' ? object.merchant_id : undefined;
  const customerId = typeof object.customer_id === 'string' ? object.customer_id : null;
  return {
    envelope, body: JSON.stringify(envelope), merchantId, customerId, resourceType: r.type, resourceId,
    streamId: e.streamId, streamVersion: e.version,
  };
}
