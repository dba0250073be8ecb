// Bodies: JSON only, bounded in size (here) and depth (validate.ts).
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { sendError } from '../errors.ts';

export const MAX_BODY_BYTES = 256 * 1024;

function requireJson(req: Request, res: Response, next: NextFunction): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    return sendError(res, 'unsupported_media_type', 'Request bodies must be application/json');
  }
  next();
}

/** The body's bytes as received: a provider's callback signature covers them (RFC 9421 Content-Digest). */
export const rawBodyOf = (req: Request): Buffer => (req as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);

export function jsonBodies(): RequestHandler[] {
  return [requireJson, express.json({
    limit: MAX_BODY_BYTES, strict: false, type: 'application/json',
    verify: (req, _res, buf) => { (req as Request & { rawBody?: Buffer }).rawBody = buf; },
  })];
}
