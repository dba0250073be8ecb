// Assembles the one OpenAPI 3.1 document from the feature modules. It is served at /openapi.json
// and it is what validates every request.
import { commonSchemas, errors } from './common.ts';
import { tags } from './tags.ts';
import { webhooks, webhookSchemas } from './webhooks.ts';
import { withExamples } from './with-examples.ts';
import { operationExamples } from './examples/operations.ts';
import type { ApiModule, Operation } from '../module.ts';

export function buildDocument(modules: ApiModule[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = { ...commonSchemas, ...webhookSchemas() };
  for (const m of modules) {
    for (const [p, ops] of Object.entries(m.paths)) {
      paths[p] = { ...(paths[p] ?? {}), ...ops };
    }
    Object.assign(schemas, m.schemas ?? {});
  }
  // Security per operation from its x-auth; its examples.
  for (const ops of Object.values(paths)) {
    for (const [method, raw] of Object.entries(ops)) {
      const op = raw as Operation;
      const auth = op['x-auth'];
      op.security = auth === 'merchant' ? [{ ApiKey: [], ApiSecret: [] }] : auth === 'admin' ? [{ AdminToken: [] }] : [];
      // An API key without the operation's scope is refused 403 (CONTRACT §18, api/middleware/scope.ts).
      const scoped = auth === 'merchant' && op['x-scope'] !== 'any' ? { ...op, responses: { ...op.responses, 403: errors[403] } } : op;
      ops[method] = withExamples(scoped, operationExamples[op.operationId]);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Merchant Payments API',
      version: '1.0.0',
      description:
        'Collections (payins), disbursements (payouts) and two-leg transfers over mobile money in XAF and XOF, ' +
        'quote-backed, idempotent, with signed webhooks. The operator API (/admin) manages merchants. ' +
        'Every date (YYYY-MM-DD) and date-time (RFC 3339) sent is a real one between 0001-01-02 and 9999-12-30 (UTC); ' +
        'any other is a 400 naming the field.',
    },
    servers: [{ url: '/' }],
    tags,
    components: {
      schemas,
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        ApiSecret: { type: 'apiKey', in: 'header', name: 'X-Api-Secret' },
        AdminToken: { type: 'http', scheme: 'bearer' },
      },
    },
    paths,
    webhooks: webhooks(),
  };
}

export type OpenApiDocument = ReturnType<typeof buildDocument>;
