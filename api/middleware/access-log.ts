// One log line and one metrics observation per answered request, taken when the response finishes.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiServices } from '../services.ts';
import { requestIdOf } from './request-id.ts';

/** Paths polled by health checks and metrics scrapers. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

export function accessLog(services: ApiServices): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const id = requestIdOf(req);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The full path (a router mounted at /dashboard sees only its part in req.path), never the query.
      const path = req.originalUrl.split('?')[0]!;
      // A probe's or a scraper's answered poll is routine (every few seconds, for ever): at debug. A
      // failed one stays at info, like every other request.
      const level = PROBES.has(path) && res.statusCode < 400 ? 'debug' : 'info';
      services.log[level]({
        request_id: id, method: req.method, path, status: res.statusCode, duration_ms: durationMs,
      }, 'request');
      // By the OpenAPI path template the request matched (never the concrete path: bounded labels).
      const route = typeof res.locals.route === 'string' ? res.locals.route : req.path.startsWith('/docs/') ? '/docs/*' : 'unmatched';
      services.metrics.observeRequest(req.method, route, res.statusCode, durationMs / 1000);
    });
    next();
  };
}

/** The metrics label of an API route: its OpenAPI path template (access-log.ts reads it). */
export function labelRoute(template: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.route = template;
    next();
  };
}
