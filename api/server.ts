// The HTTP server: Express 5 with the OpenAPI document as the single source of routes and
// validation. Every response carries X-Request-Id; every error uses the contract's error body.
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { DomainError, InvariantViolation, type ErrorCode, type ErrorDetail } from '../domain/errors.ts';
import type { ApiServices } from './services.ts';
import { authenticateAdmin, authenticateMerchant } from './auth.ts';
import { errorBody, STATUS_OF } from './errors.ts';
import type { ApiModule, Ctx, Operation, Reply } from './module.ts';
import { buildDocument, type OpenApiDocument } from './openapi/document.ts';
import { compileValidators, describeErrors } from './validation.ts';
import { validKey } from '../commands/idempotency.ts';
import { runIdempotent } from './idempotent.ts';
import { DOCS_INIT_JS, swaggerUiDir } from './routes/system.ts';
import { FailureWindow, TokenBuckets } from './rate-limit.ts';
import { unstorableField } from './storable-text.ts';
import { isDependencyUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from './unavailable.ts';

class RateLimited extends Error {
  constructor(readonly retryAfterSeconds: number, message: string) {
    super(message);
  }
}

export const MAX_BODY_BYTES = 256 * 1024;
export const MAX_JSON_DEPTH = 32;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

function jsonDepth(value: unknown, depth = 0): number {
  if (depth > MAX_JSON_DEPTH) return depth;
  if (value && typeof value === 'object') {
    let max = depth + 1;
    for (const v of Object.values(value)) max = Math.max(max, jsonDepth(v, depth + 1));
    return max;
  }
  return depth;
}

function send(res: Response, reply: Reply): void {
  if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
  if ('text' in reply) {
    res.status(reply.status).type(reply.contentType).send(reply.text);
  } else {
    res.status(reply.status).json(reply.body);
  }
}

function sendError(res: Response, code: ErrorCode, message: string, details?: ErrorDetail[]): void {
  const requestId = String(res.getHeader('X-Request-Id') ?? '');
  res.status(STATUS_OF[code]).json(errorBody(code, message, details, requestId));
}

/** Replaces Express's `{id}` form with ours: OpenAPI `{id}` → Express `:id`. */
const expressPath = (p: string) => p.replace(/\{([^}]+)\}/g, ':$1');

export interface HttpApp {
  app: express.Express;
  document: OpenApiDocument;
}

export function createHttpApp(services: ApiServices, modules: ApiModule[], extraRoutes: Array<(app: express.Express) => void> = []): HttpApp {
  const document = buildDocument(modules);
  const validators = compileValidators(document);
  const handlers = Object.assign({}, ...modules.map((m) => m.handlers)) as ApiModule['handlers'];
  const c = services.config;
  const buckets = new TokenBuckets(c.rateLimitPerSecond, c.rateLimitBurst);
  const failures = new FailureWindow(c.authFailuresPerWindow, c.authFailureWindowSeconds * 1000);
  // One address may front many merchants (NAT, a proxy): looser than per key, still bounded.
  const failuresByIp = new FailureWindow(c.authFailuresPerWindow * 5, c.authFailureWindowSeconds * 1000);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const incoming = req.header('x-request-id');
    const id = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
    (req as Request & { id: string }).id = id;
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The full path (a router mounted at /dashboard sees only its part in req.path), never the query.
      services.log.info({
        request_id: id, method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, duration_ms: durationMs,
      }, 'request');
      // By the OpenAPI path template the request matched (never the concrete path: bounded labels).
      const route = typeof res.locals.route === 'string' ? res.locals.route : req.path.startsWith('/docs/') ? '/docs/*' : 'unmatched';
      services.metrics.observeRequest(req.method, route, res.statusCode, durationMs / 1000);
    });
    next();
  });

  // HTTP/1.1 requires Host (RFC 9112 §3.2); the HTTP server leaves the refusal to us (http-server.ts).
  app.use((req, res, next) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) return sendError(res, 'bad_request', 'HTTP/1.1 requests need a Host header');
    next();
  });

  app.use('/docs/assets', express.static(swaggerUiDir, { maxAge: '1h', index: false }));
  app.get('/docs/init.js', (_req, res) => { res.type('application/javascript').send(DOCS_INIT_JS); });
  for (const extra of extraRoutes) extra(app);

  // Bodies: JSON only, bounded in size and depth.
  app.use((req, res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is('application/json')) {
      return sendError(res, 'unsupported_media_type', 'Request bodies must be application/json');
    }
    next();
  });
  app.use(express.json({ limit: MAX_BODY_BYTES, strict: false, type: 'application/json' }));

  for (const [path, ops] of Object.entries(document.paths)) {
    for (const [method, rawOp] of Object.entries(ops)) {
      const op = rawOp as unknown as Operation;
      const handler = handlers[op.operationId];
      if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
      const validator = validators.get(op.operationId)!;
      const route = expressPath(path);
      (app as unknown as Record<string, (p: string, h: (req: Request, res: Response, next: NextFunction) => void) => void>)[method]!(route, (req, res, next) => {
        res.locals.route = path;
        run(req, res, op, handler, validator).catch(next);
      });
    }
  }

  async function run(req: Request, res: Response, op: Operation, handler: ApiModule['handlers'][string], v: ReturnType<typeof validators.get> & object): Promise<void> {
    const requestId = (req as Request & { id: string }).id;
    const log = services.log.child({ request_id: requestId });
    let merchantId = '';
    if (op['x-auth'] !== 'public') {
      const now = Date.now();
      const ipKey = `ip:${req.socket.remoteAddress ?? ''}`;
      const presented = `key:${op['x-auth'] === 'merchant' ? req.header('x-api-key') ?? '' : 'operator'}`;
      const wait = Math.max(failuresByIp.blockedFor(ipKey, now), failures.blockedFor(presented, now));
      if (wait > 0) throw new RateLimited(wait, 'Too many failed authentications; try again later');
      try {
        if (op['x-auth'] === 'merchant') {
          merchantId = await authenticateMerchant(services, req.header('x-api-key'), req.header('x-api-secret'));
        } else {
          authenticateAdmin(services.adminToken, req.header('authorization'));
        }
      } catch (err) {
        failuresByIp.fail(ipKey, now);
        failures.fail(presented, now);
        throw err;
      }
      if (op['x-auth'] === 'merchant') {
        const retry = buckets.take(req.header('x-api-key')!, now);
        if (retry > 0) throw new RateLimited(retry, 'Rate limit exceeded for this API key');
      }
    }
    const params = { ...req.params } as Record<string, string>;
    if ((v.params && !v.params(params)) || unstorableField(params) !== undefined) {
      // A malformed id in a path names nothing: the same 404 as an unknown one.
      throw new DomainError('not_found', 'Resource not found');
    }
    const query = { ...(req.query as Record<string, unknown>) };
    const badQuery = unstorableField(query);
    if (badQuery !== undefined) {
      throw new DomainError('bad_request', 'Invalid query parameters', [{ field: `query.${badQuery}`, message: 'must not contain NUL or unpaired surrogates' }]);
    }
    if (v.query && !v.query(query)) {
      throw new DomainError('bad_request', 'Invalid query parameters', describeErrors(v.query.errors, 'query.'));
    }
    let idemKey: string | undefined;
    if (op['x-idempotent']) {
      idemKey = req.header('idempotency-key');
      if (idemKey === undefined || idemKey === '') {
        throw new DomainError('idempotency_key_required', 'This endpoint requires an Idempotency-Key header');
      }
      if (!validKey(idemKey)) {
        throw new DomainError('bad_request', 'Invalid Idempotency-Key', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable characters' }]);
      }
    }
    const body = req.body === undefined ? {} : req.body;
    if (jsonDepth(body) > MAX_JSON_DEPTH) {
      throw new DomainError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const badField = unstorableField(body);
    if (badField !== undefined) {
      throw new DomainError('bad_request', 'The request body is invalid', [{ field: badField, message: 'must not contain NUL or unpaired surrogates' }]);
    }
    if (v.body && !v.body(body)) {
      throw new DomainError('bad_request', 'The request body is invalid', describeErrors(v.body.errors));
    }
    const ctx: Ctx = {
      services, log, requestId, merchantId, body, params, query,
      headers: req.headers, clientIp: req.socket.remoteAddress ?? '',
    };
    if (!idemKey) {
      send(res, await handler(ctx));
      return;
    }
    send(res, await runIdempotent({ ctx, handler, key: idemKey, method: req.method, path: req.path }));
  }

  app.use((_req: Request, res: Response) => sendError(res, 'not_found', 'No such route'));

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof RateLimited) {
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return sendError(res, 'rate_limited', err.message);
    }
    if (err instanceof DomainError) return sendError(res, err.code, err.message, err.details);
    const e = err as { type?: string; status?: number };
    if (e?.type === 'entity.too.large') return sendError(res, 'payload_too_large', `Request bodies are limited to ${MAX_BODY_BYTES} bytes`);
    if (e?.type === 'entity.parse.failed') return sendError(res, 'bad_request', 'The request body is not valid JSON');
    if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') return sendError(res, 'unsupported_media_type', 'Unsupported body encoding');
    if (e?.status && e.status >= 400 && e.status < 500) return sendError(res, 'bad_request', 'Bad request');
    if (isDependencyUnavailable(err)) {
      services.log.warn({ err, request_id: res.getHeader('X-Request-Id') }, 'dependency unavailable');
      res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      return sendError(res, 'service_unavailable', 'The service is briefly unavailable; retry the same request');
    }
    services.log.error({ err, request_id: res.getHeader('X-Request-Id') }, 'unhandled error');
    if (err instanceof InvariantViolation) {
      // Corrupt money must not be served: stop loudly after answering.
      setImmediate(() => process.emit('SIGTERM'));
    }
    sendError(res, 'internal_error', 'Internal error');
  });

  return { app, document };
}
