// Every error answers the contract's error body with the request's id (api/errors.ts); this is the
// one place that turns what a request threw into an HTTP answer.
import type { NextFunction, Request, Response } from 'express';
import { DomainError, InvariantViolation } from '../../domain/errors.ts';
import type { ApiServices } from '../services.ts';
import { sendError } from '../errors.ts';
import { isDependencyUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../unavailable.ts';
import { MAX_BODY_BYTES } from './json-body.ts';
import { RateLimited } from './throttle.ts';
import { DecisionTooOld } from '../../commands/aggregates.ts';

export function noSuchRoute(_req: Request, res: Response): void {
  sendError(res, 'not_found', 'No such route');
}

/** Answers what the body parser refused (its errors carry a `type`) or another 4xx error; false for anything else. */
function bodyRefusal(res: Response, err: unknown): boolean {
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') sendError(res, 'payload_too_large', `Request bodies are limited to ${MAX_BODY_BYTES} bytes`);
  else if (e?.type === 'entity.parse.failed') sendError(res, 'bad_request', 'The request body is not valid JSON');
  else if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') sendError(res, 'unsupported_media_type', 'Unsupported body encoding');
  else if (e?.status && e.status >= 400 && e.status < 500) sendError(res, 'bad_request', 'Bad request');
  else return false;
  return true;
}

export function answerErrors(services: ApiServices) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (err instanceof RateLimited) {
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return sendError(res, 'rate_limited', err.message);
    }
    if (err instanceof DomainError) return sendError(res, err.code, err.message, err.details);
    if (bodyRefusal(res, err)) return;
    if (isDependencyUnavailable(err) || err instanceof DecisionTooOld) {
      services.log.warn({ err, request_id: res.getHeader('X-Request-Id') }, 'dependency unavailable');
      res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      return sendError(res, 'service_unavailable', 'The service is briefly unavailable; retry the same request');
    }
    services.log.error({ err, request_id: res.getHeader('X-Request-Id') }, 'unhandled error');
    if (err instanceof InvariantViolation) {
      // A read changes nothing: an inconsistency it finds (read models caught mid-rebuild) is logged
      // and answered 503, and the process serves on (CONTRACT §17). A write that broke an invariant
      // may be about to corrupt money: stop loudly after answering.
      if (req.method === 'GET' || req.method === 'HEAD') {
        res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
        return sendError(res, 'service_unavailable', 'The service is briefly unavailable; retry the same request');
      }
      setImmediate(() => process.emit('SIGTERM'));
    }
    sendError(res, 'internal_error', 'Internal error');
  };
}
