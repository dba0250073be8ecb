// The HTTP server: Express 5 with the OpenAPI document as the single source of routes and
// validation. Every response carries X-Request-Id; every error uses the contract's error body.
// Each operation's route is a pipeline of small middlewares (middleware/), one concern each, in
// this order: authentication (a throttle on failed attempts before it), the per-key rate limit,
// the key's scope (CONTRACT §18), path and query validation, the Idempotency-Key, body validation, then the handler
// (an operator change's success recorded in the audit log before it is answered: middleware/audit.ts).
import express, { type RequestHandler } from 'express';
import type { ApiServices } from './services.ts';
import type { ApiModule, BodyCheck, Handler, Operation } from './module.ts';
import { buildDocument, type OpenApiDocument } from './openapi/document.ts';
import { compileValidators, type OperationValidator } from './validation.ts';
import { DOCS_INIT_JS, swaggerUiDir } from './routes/system.ts';
import { assignRequestId } from './middleware/request-id.ts';
import { accessLog, labelRoute } from './middleware/access-log.ts';
import { requireHost } from './middleware/host.ts';
import { jsonBodies } from './middleware/json-body.ts';
import { authenticate } from './middleware/authenticate.ts';
import { requireScope } from './middleware/scope.ts';
import { AuthFailures, limitRate } from './middleware/throttle.ts';
import { validateBody, validatePathAndQuery } from './middleware/validate.ts';
import { idempotently, requireIdempotencyKey } from './middleware/idempotency.ts';
import { respond } from './middleware/respond.ts';
import { audited } from './middleware/audit.ts';
import { answerErrors, noSuchRoute } from './middleware/errors.ts';

/** Replaces Express's `{id}` form with ours: OpenAPI `{id}` → Express `:id`. */
const expressPath = (p: string) => p.replace(/\{([^}]+)\}/g, ':$1');

export interface HttpApp {
  app: express.Express;
  document: OpenApiDocument;
}

/** What every operation's pipeline shares: one set of abuse counters per app. */
interface Shared {
  services: ApiServices;
  failures: AuthFailures;
  rateLimit: RequestHandler;
}

function pipeline(s: Shared, op: Operation, method: string, validator: OperationValidator, handler: Handler, check?: BodyCheck): RequestHandler[] {
  const auth = op['x-auth'];
  return [
    ...(auth === 'public' ? [] : [authenticate(s.services, auth, s.failures)]),
    ...(auth === 'merchant' ? [s.rateLimit, requireScope(op)] : []),
    validatePathAndQuery(validator),
    ...(op['x-idempotent'] ? [requireIdempotencyKey] : []),
    validateBody(validator, check && ((body) => check(body, s.services.clock.now().toISOString()))),
    respond(s.services, audited(op, method, op['x-idempotent'] ? idempotently(handler) : (ctx) => handler(ctx))),
  ];
}

export function createHttpApp(services: ApiServices, modules: ApiModule[], extraRoutes: Array<(app: express.Express) => void> = []): HttpApp {
  const document = buildDocument(modules);
  const validators = compileValidators(document);
  const handlers = Object.assign({}, ...modules.map((m) => m.handlers)) as ApiModule['handlers'];
  const bodyChecks = Object.assign({}, ...modules.map((m) => m.bodyChecks ?? {})) as NonNullable<ApiModule['bodyChecks']>;
  const shared: Shared = { services, failures: new AuthFailures(services.config), rateLimit: limitRate(services.config, services.clock) };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(assignRequestId, accessLog(services), requireHost);
  app.use('/docs/assets', express.static(swaggerUiDir, { maxAge: '1h', index: false }));
  app.get('/docs/init.js', (_req, res) => { res.type('application/javascript').send(DOCS_INIT_JS); });
  for (const extra of extraRoutes) extra(app);
  app.use(jsonBodies());

  for (const [path, ops] of Object.entries(document.paths)) {
    for (const [method, rawOp] of Object.entries(ops)) {
      const op = rawOp as unknown as Operation;
      const handler = handlers[op.operationId];
      if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
      const route = (app as unknown as Record<string, (p: string, ...h: RequestHandler[]) => void>)[method]!;
      route.call(app, expressPath(path), labelRoute(path), ...pipeline(shared, op, method, validators.get(op.operationId)!, handler, bodyChecks[op.operationId]));
    }
  }

  app.use(noSuchRoute);
  app.use(answerErrors(services));
  return { app, document };
}
