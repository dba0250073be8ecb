// System endpoints (issue 2 point 4, CONTRACT.md §1 and §8): the OpenAPI document at /openapi.json,
// its rendering at /docs, /healthz, and /readyz answering 503 when a dependency is down.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startTestApp, request } from './helpers/app.ts';
import { createHttpApp } from '../api/server.ts';
import { systemModule } from '../api/routes/system.ts';
import { buildDocument } from '../api/openapi/document.ts';
import { apiModules } from '../app/registry.ts';
import type { ApiServices } from '../api/services.ts';
import knex from 'knex';
import type { Database } from '../infra/db.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

/** The seed's paths, then the contract's (CONTRACT.md §2, §7, §8) and the system ones. */
const SEED_PATHS = [
  '/customers', '/customers/{customer_id}', '/customers/{customer_id}/kyc',
  '/quotes/payin', '/quotes/payout', '/quotes/transfer', '/quotes/{quote_id}',
  '/payins', '/payins/{payin_id}', '/payouts', '/payouts/{payout_id}',
  '/transfers', '/transfers/{transfer_id}', '/transfers/{transfer_id}/relaunch-payout',
];
const CONTRACT_PATHS = [
  '/wallets', '/operators', '/quotes', '/events', '/events/{event_id}', '/events/{event_id}/redeliver',
  '/admin/merchants', '/admin/merchants/{merchant_id}', '/admin/merchants/{merchant_id}/status',
  '/admin/merchants/{merchant_id}/api-keys', '/admin/merchants/{merchant_id}/api-keys/{key_id}/rotate',
  '/admin/merchants/{merchant_id}/api-keys/{key_id}/revoke', '/admin/merchants/{merchant_id}/webhook',
  '/admin/merchants/{merchant_id}/routing', '/admin/merchants/{merchant_id}/pricing',
  '/admin/merchants/{merchant_id}/wallets/{currency}/top-ups',
  '/healthz', '/readyz', '/openapi.json', '/docs',
];

t.test('GET /openapi.json: public, OpenAPI 3.1.0, version 1.0.0, every seed and contract path', async (t) => {
  const r = await request(h.url, 'GET', '/openapi.json');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^application\/json/);
  t.ok(r.headers.get('x-request-id'));
  const doc = r.body;
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.0.0');
  t.ok(doc.info.title);
  const paths = Object.keys(doc.paths);
  for (const p of [...SEED_PATHS, ...CONTRACT_PATHS]) t.ok(paths.includes(p), `documents ${p}`);
  t.same(doc.paths['/customers/{customer_id}/kyc'] && Object.keys(doc.paths['/customers/{customer_id}/kyc']).includes('post'), true, 'KYC submission is a POST');
  // Every operation: a unique operationId, who may call it, and a security requirement to match.
  const ids = new Set<string>();
  for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      t.ok(op.operationId && !ids.has(op.operationId), `${method} ${p} has its own operationId`);
      ids.add(op.operationId);
      t.ok(['merchant', 'admin', 'public'].includes(op['x-auth']), `${method} ${p} says who may call it`);
      t.ok(Array.isArray(op.security), `${method} ${p} has security`);
    }
  }
  t.same(doc.components.securitySchemes.ApiKey, { type: 'apiKey', in: 'header', name: 'X-Api-Key' });
  t.same(doc.components.securitySchemes.ApiSecret, { type: 'apiKey', in: 'header', name: 'X-Api-Secret' });
});

t.test('the served document is the one built from every registered module', async (t) => {
  const served = (await request(h.url, 'GET', '/openapi.json')).body;
  const built = JSON.parse(JSON.stringify(buildDocument([systemModule(() => undefined), ...apiModules])));
  t.same(served, built);
});

t.test('GET /docs renders the document with swagger-ui, without credentials', async (t) => {
  const page = await request(h.url, 'GET', '/docs');
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.match(page.text, /<!doctype html>/i);
  t.match(page.text, /swagger-ui-bundle\.js/);
  t.match(page.text, /swagger-ui\.css/);
  const init = await request(h.url, 'GET', '/docs/init.js');
  t.equal(init.status, 200);
  t.match(init.headers.get('content-type'), /javascript/);
  t.match(init.text, /SwaggerUIBundle\(\{ url: '\/openapi\.json'/, 'it renders /openapi.json');
  for (const asset of ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']) {
    const a = await request(h.url, 'GET', asset);
    t.equal(a.status, 200, asset);
    t.ok(a.text.length > 1000, `${asset} is the real file`);
  }
});

t.test('GET /healthz and /readyz: 200 in embedded mode, without credentials', async (t) => {
  const health = await request(h.url, 'GET', '/healthz');
  t.equal(health.status, 200);
  t.same(health.body, { status: 'ok' });
  const ready = await request(h.url, 'GET', '/readyz');
  t.equal(ready.status, 200);
  t.same(ready.body, { status: 'ready', checks: { event_store: true, database: true, bus: true, migrations: true } });
});

t.test('/readyz is 503 naming the failed check when the event store or the bus is down', async (t) => {
  const s = h.app.services;
  for (const [name, target] of [['event_store', s.store], ['bus', s.bus]] as const) {
    const original = target.healthy;
    target.healthy = async () => false;
    try {
      const r = await request(h.url, 'GET', '/readyz');
      t.equal(r.status, 503, `${name} down`);
      t.equal(r.body.status, 'not_ready');
      t.equal(r.body.checks[name], false, `${name} is named`);
      t.equal(Object.values(r.body.checks).filter((v) => v === false).length, 1, 'only that check fails');
      t.equal((await request(h.url, 'GET', '/healthz')).status, 200, 'still alive');
    } finally {
      target.healthy = original;
    }
    t.equal((await request(h.url, 'GET', '/readyz')).status, 200, `${name} back: ready again`);
  }
});

t.test('/readyz is 503 while a migration is missing', async (t) => {
  const s = h.app.services;
  // A migration not applied (a process started against an older schema).
  const last = await s.knex('knex_migrations').orderBy('id', 'desc').first();
  await s.knex('knex_migrations').where({ id: last.id }).delete();
  try {
    const pending = await request(h.url, 'GET', '/readyz');
    t.equal(pending.status, 503);
    t.same(pending.body, { status: 'not_ready', checks: { event_store: true, database: true, bus: true, migrations: false } });
  } finally {
    await s.knex('knex_migrations').insert(last);
  }
  t.equal((await request(h.url, 'GET', '/readyz')).status, 200, 'applied again: ready');
});

t.test('/readyz is 503 when the database cannot be reached', async (t) => {
  // The same service, but its database (read models and event store) on an address where nothing
  // listens: a database that is down.
  const url = 'postgres://nobody@127.0.0.1:1/gone';
  const quiet = { warn: () => undefined, error: () => undefined, debug: () => undefined, deprecate: () => undefined };
  const k = knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 }, log: quiet });
  const db: Database = { knex: k, url, close: () => k.destroy() };
  t.teardown(() => db.close());
  const services: ApiServices = { ...h.app.services, db, knex: db.knex, store: new PostgresEventStore(db, h.clock) };
  const server = http.createServer(createHttpApp(services, [systemModule(() => ({}))]).app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const front = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const down = await request(front, 'GET', '/readyz');
  t.equal(down.status, 503);
  t.same(down.body, { status: 'not_ready', checks: { event_store: false, database: false, bus: true, migrations: false } });
  t.equal((await request(front, 'GET', '/healthz')).status, 200, 'liveness does not depend on the database');
});
