// Public system routes: liveness, readiness, the OpenAPI document and its rendering.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ApiModule } from '../module.ts';
import { errors, json } from '../openapi/common.ts';
import { migrationsApplied } from '../../infra/db.ts';

const pub = { 'x-auth': 'public' as const, tags: ['System'] };

export const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Merchant Payments API</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

/** Any route, public ones included: an HTTP/1.1 request without a Host header (api/middleware/host.ts). */
const noHost = { 400: { ...errors[400], description: 'An HTTP/1.1 request without a Host header' } };

const health = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } };
const check = { type: 'boolean' };
const readiness = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: {
      type: 'object',
      required: ['event_store', 'database', 'bus', 'migrations'],
      properties: { event_store: check, database: check, bus: check, migrations: check },
    },
  },
};

export function systemModule(getDocument: () => unknown): ApiModule {
  return {
    paths: {
      '/healthz': {
        get: {
          ...pub, operationId: 'healthz', summary: 'Liveness',
          description: '200 as soon as the process is up and serving; it checks nothing else (see /readyz). Public.',
          responses: { 200: json(health), ...noHost },
        },
      },
      '/readyz': {
        get: {
          ...pub, operationId: 'readyz', summary: 'Readiness: event store, read-model database, bus, migrations',
          description:
            '200 only when the event store, the read-model database and the bus are reachable ' +
            'and the migrations are applied; else 503 naming the failed check in `checks`. Public.',
          responses: { 200: json(readiness), 503: json(readiness, 'Not ready: the failed check is false'), ...noHost },
        },
      },
      '/openapi.json': {
        get: {
          ...pub, operationId: 'openapi', summary: 'This document',
          description: 'The OpenAPI 3.1 document of this API: the same one that validates every request. Public.',
          responses: { 200: json({ type: 'object' }), ...noHost },
        },
      },
      '/docs': {
        get: {
          ...pub, operationId: 'docs', summary: 'This document, rendered', description: 'The document rendered with Swagger UI. Public.',
          responses: { 200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } }, ...noHost },
        },
      },
    },
    handlers: {
      healthz: async () => ({ status: 200, body: { status: 'ok' } }),
      readyz: async (ctx) => {
        const s = ctx.services;
        const [store, bus, migrations] = await Promise.all([
          s.store.healthy(),
          s.bus.healthy(),
          migrationsApplied(s.db).catch(() => false),
        ]);
        const database = await s.knex.raw('SELECT 1').then(() => true, () => false);
        const checks = { event_store: store, database, bus, migrations };
        const ready = Object.values(checks).every(Boolean);
        return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', checks } };
      },
      openapi: async () => ({ status: 200, body: getDocument() }),
      docs: async () => ({ status: 200, text: DOCS_HTML, contentType: 'text/html' }),
    },
  };
}

export const DOCS_INIT_JS = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', deepLinking: true });`;
