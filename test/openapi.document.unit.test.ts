// The OpenAPI document as a product (issue 31 point 2), read as built from the modules: every
// operation described, tagged with a declared tag (merchant API first) and with a request and a
// success example, each example valid against its own schema; error codes and event names as
// enums; a webhooks entry per event whose envelope's data.object is the resource's schema.
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildDocument } from '../api/openapi/document.ts';
import { systemModule } from '../api/routes/system.ts';
import { STATUS_OF } from '../api/errors.ts';
import { apiModules } from '../app/registry.ts';
import { WEBHOOK_EVENTS_BY_TYPE } from '../domain/webhook-events.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const doc = JSON.parse(JSON.stringify(buildDocument([systemModule(() => undefined), ...apiModules])));
const ops = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, byMethod]) =>
  Object.entries(byMethod).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })));
const hooks = Object.entries<Record<string, any>>(doc.webhooks).map(([event, byMethod]) => ({ where: `webhook ${event}`, event, op: byMethod.post }));

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema({ $id: 'openapi', components: doc.components }, 'openapi');
const rebase = (s: unknown): unknown => (Array.isArray(s) ? s.map(rebase) : s && typeof s === 'object'
  ? Object.fromEntries(Object.entries(s).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? `openapi${v}` : rebase(v)]))
  : s);
const problems = (schema: unknown, value: unknown) => {
  const validate = ajv.compile(rebase(schema) as object);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
};
const success = (op: any) => op.responses[Object.keys(op.responses).find((s) => s.startsWith('2'))!];

t.test('every operation has a description and a tag declared in the global tags', async (t) => {
  const declared = doc.tags.map((x: { name: string }) => x.name);
  t.ok(doc.tags.every((x: { description?: string }) => x.description), 'each global tag is described');
  for (const { where, op } of [...ops, ...hooks]) {
    t.ok(typeof op.description === 'string' && op.description.length > 20, `${where}: described`);
    t.ok(op.tags?.length > 0 && op.tags.every((x: string) => declared.includes(x)), `${where}: tagged with declared tags`);
  }
});

t.test('the merchant API comes first in the tags, then the operator API, then the system', async (t) => {
  const index = (tag: string) => doc.tags.findIndex((x: { name: string }) => x.name === tag);
  const last = (auth: string) => Math.max(...ops.filter((o) => o.op['x-auth'] === auth).flatMap((o) => o.op.tags.map(index)));
  const first = (auth: string) => Math.min(...ops.filter((o) => o.op['x-auth'] === auth).flatMap((o) => o.op.tags.map(index)));
  t.ok(last('merchant') < first('admin'), 'every merchant tag before every operator tag');
  t.equal(doc.tags.at(-1).name, 'System', 'the system last');
});

t.test('every operation has a request example (with a JSON body) and a success example, each valid', async (t) => {
  for (const { where, op } of ops) {
    const body = op.requestBody?.content?.['application/json'];
    if (body) {
      t.not(body.example, undefined, `${where}: a request example`);
      t.same(problems(body.schema, body.example), [], `${where}: the request example matches its schema`);
    }
    if (op.responses['204']) continue; // No Content: nothing to show
    const answer = success(op);
    const [media] = Object.values<any>(answer.content ?? {});
    t.ok(media, `${where}: the success answer has a media type`);
    t.not(media?.example, undefined, `${where}: a success example`);
    if (media?.schema) t.same(problems(media.schema, media.example), [], `${where}: the success example matches its schema`);
  }
});

t.test('error codes and event names are enums', async (t) => {
  t.same([...doc.components.schemas.Error.properties.error.properties.code.enum].sort(), Object.keys(STATUS_OF).sort());
  t.same([...doc.components.schemas.WebhookEventName.enum].sort(), Object.values(WEBHOOK_EVENTS_BY_TYPE).flat().sort());
  t.same(doc.components.schemas.WebhookEvent.properties.event, { $ref: '#/components/schemas/WebhookEventName' });
});

t.test('webhooks: one entry per event, its envelope with data.object of its data.type', async (t) => {
  const objects: Record<string, string> = { payin: 'Payin', payout: 'Payout', transfer: 'Transfer', refund: 'Refund', test: 'WebhookTestObject' };
  for (const [type, events] of Object.entries(WEBHOOK_EVENTS_BY_TYPE)) {
    for (const event of events) {
      const op = doc.webhooks[event]?.post;
      t.ok(op, `${event} is described`);
      const media = op.requestBody.content['application/json'];
      const envelope = doc.components.schemas[String(media.schema.$ref).split('/').pop()!];
      t.same(envelope.required, ['id', 'event', 'created_at', 'data'], `${event}: the envelope`);
      t.ok(envelope.properties.event.enum.includes(event), `${event}: its name`);
      t.same(envelope.properties.data.properties.type, { type: 'string', const: type }, `${event}: data.type ${type}`);
      t.same(envelope.properties.data.properties.object, { $ref: `#/components/schemas/${objects[type]}` }, `${event}: data.object`);
      if (media.example !== undefined) t.same(problems(media.schema, media.example), [], `${event}: the example matches`);
    }
  }
  t.same(Object.keys(doc.webhooks).sort(), Object.values(WEBHOOK_EVENTS_BY_TYPE).flat().sort(), 'no other entry');
});
