// The document's `webhooks` section (OpenAPI 3.1): what the service POSTs to the merchant's webhook
// endpoints (CONTRACT.md §11: each that takes the event, with its own secret), one entry per event name, each naming its envelope, whose `data.object` is the resource's own
// schema for that `data.type` (the same JSON as GET /payins/{id} and the like, at event time).
import { WEBHOOK_EVENTS_BY_TYPE } from '../../domain/webhook-events.ts';
import { ref } from './common.ts';
import { webhookExamples } from './examples/operations.ts';

/** The component schema of `data.object` per `data.type`. */
const OBJECT_SCHEMA: Record<string, string> = { payin: 'Payin', payout: 'Payout', transfer: 'Transfer', refund: 'Refund', test: 'WebhookTestObject' };

const envelopeName = (type: string) => `WebhookEnvelope${type[0]!.toUpperCase()}${type.slice(1)}`;
const operationName = (event: string) => `on${event.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}`;

const header = (name: string, description: string, example: string) => ({
  name, in: 'header', required: true, description, schema: { type: 'string' }, example,
});

const signatureHeaders = [
  header('X-Service-Signature', "sha256= and the lower-case hex HMAC-SHA256 of `<X-Service-Timestamp>.<raw body>`, keyed with the endpoint's signing secret in force",
    'sha256=5d1c3f0a9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817060f5e'),
  header('X-Service-Timestamp', 'Unix time in seconds of this attempt (each attempt is signed afresh)', '1780308000'),
  header('X-Service-Event', 'The event name, as in the body', 'payin.completed'),
  header('X-Service-Webhook-Id', "The event id (the body's id), the same on every attempt", '8b0d3c9e-8a4f-4a51-9a4e-1c2d3e4f5a6b'),
];

/** The envelope schemas (one per data.type), the test event's object and the list of event names. */
export function webhookSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {
    WebhookEventName: { type: 'string', enum: Object.values(WEBHOOK_EVENTS_BY_TYPE).flat(), description: 'The name of a webhook event' },
    WebhookResourceType: { type: 'string', enum: Object.keys(WEBHOOK_EVENTS_BY_TYPE), description: 'data.type: the kind of resource data.object is' },
    WebhookTestObject: {
      type: 'object',
      description: 'data.object of webhook.test: nothing happened; answer 2xx to acknowledge it.',
      required: ['id', 'merchant_id', 'message', 'created_at'],
      properties: { id: ref('Uuid'), merchant_id: ref('Uuid'), message: { type: 'string' }, created_at: ref('DateTime') },
    },
  };
  for (const [type, events] of Object.entries(WEBHOOK_EVENTS_BY_TYPE)) {
    out[envelopeName(type)] = {
      type: 'object',
      description: `The body of a ${type} event: the same bytes on every attempt. data.object is the ${type} at the moment of the event.`,
      required: ['id', 'event', 'created_at', 'data'],
      properties: {
        id: { ...ref('Uuid'), description: 'The event id (X-Service-Webhook-Id)' },
        event: { type: 'string', enum: [...events] },
        created_at: { ...ref('DateTime'), description: 'When the state changed' },
        data: {
          type: 'object',
          required: ['type', 'id', 'object'],
          properties: { type: { type: 'string', const: type }, id: { ...ref('Uuid'), description: 'The resource id' }, object: ref(OBJECT_SCHEMA[type]!) },
        },
      },
    };
  }
  return out;
}

/** One `webhooks` entry per event name: a POST to the merchant's URL that a 2xx acknowledges. */
export function webhooks(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [type, events] of Object.entries(WEBHOOK_EVENTS_BY_TYPE)) {
    for (const event of events) {
      out[event] = {
        post: {
          operationId: operationName(event),
          tags: ['Webhooks'],
          summary: `${event}: sent to each of your webhook endpoints that takes it`,
          description: `Sent when ${event === 'webhook.test' ? 'the merchant asks for a test event from the dashboard' : `the ${type} reaches ${event.split('.').slice(1).join(' ')}`}. ` +
            'Check X-Service-Signature before trusting the body; answer any 2xx within the time-out to acknowledge it, ' +
            'or it is retried on the schedule (7 attempts in all). It goes to every enabled endpoint whose enabled_events names it ' +
            '(or is ["*"]), each with its own attempts and signed with that endpoint\'s secret; the body and X-Service-Webhook-Id are the same for all. ' +
            'After a rotation the current secret signs until activates_at, then the new one (POST /webhook-endpoints/{id}/rotate-secret).',
          security: [],
          parameters: signatureHeaders,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref(envelopeName(type)), ...(webhookExamples[event] ? { example: webhookExamples[event] } : {}) } },
          },
          responses: {
            200: { description: 'Acknowledged (any 2xx acknowledges)' },
            400: { description: 'Not acknowledged (any other answer, or none within the time-out): the event is retried' },
          },
        },
      };
    }
  }
  return out;
}
